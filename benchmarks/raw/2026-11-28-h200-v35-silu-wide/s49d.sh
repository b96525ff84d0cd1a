# s49 call: HEAD's nox wheel (.device/s49): the GPU suite's first half, then the
# norms on gpu_sweep.py's grid with the rivals (run 1).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 380 python scripts/gpu_test.py .device/s49/*.whl --no-sanitizer --part 1/2 > $R/part1.log 2>&1; echo "part 1/2 rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|PASS|FAIL" $R/part1.log | tail -4
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s49/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
left=$(( 585 - ($(date +%s) - start) ))
timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-norm-run1.csv --label v35 --ops rms_norm,fused_add_rms_norm > $R/sweep-norm-run1.log 2>&1
echo "norm sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-norm-run1.csv) lines"
cd $OUT && tar czf r.tgz r && rm -rf r
