# s49 call G: the silu forward past 2^20 vectors in 16-byte vectors where the DRAM peaks
# at 4 TB/s or more (.device/s49g: pip wheel for sm_90 of the working tree).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst49g; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s49g/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
python -c "import torch; p = torch.cuda.get_device_properties(0); print(p.name, 'memory_clock_rate', p.memory_clock_rate, 'kHz, bus', p.memory_bus_width, 'bits, peak', 2 * p.memory_clock_rate * 1e3 * p.memory_bus_width / 8 / 1e12, 'TB/s')" | tee $R/dram.txt
PYTHONPATH=$D timeout 60 compute-sanitizer --tool memcheck python .device/scripts/memcheck_silu.py > $R/memcheck.log 2>&1; echo "memcheck rc=$? at $(( $(date +%s) - start )) s"; tail -2 $R/memcheck.log
timeout 170 python scripts/gpu_test.py .device/s49g/*.whl --no-sanitizer -k silu > $R/tests.log 2>&1; echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|PASS|FAIL|gpu tests" $R/tests.log | grep -v "pytest (GPU" | tail -4
left=$(( 330 - ($(date +%s) - start) ))
PYTHONPATH=$D timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-silu-fwd.csv --label v35g --ops silu_and_mul > $R/sweep.log 2>&1
echo "sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-silu-fwd.csv) lines"
cd $OUT && tar czf r.tgz r && rm -rf r
