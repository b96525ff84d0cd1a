# s51 call E: HEAD's nox wheel (.device/s51): the forward-plan and rms_norm tests, both
# sanitizers, then gpu_sweep.py's rms_norm grid with the rivals (the fused add's kernels did
# not change).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s51/*.whl)
timeout 150 python scripts/gpu_test.py $W --no-sanitizer -k "forward_plans or rms_norm" > $R/tests-k.log 2>&1
echo "tests -k rc=$? at $(( $(date +%s) - start )) s"
timeout 220 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
D=/tmp/inst51e; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
left=$(( ${BUDGET:-570} - ($(date +%s) - start) ))
PYTHONPATH=$D timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-rms.csv --label v37 --ops rms_norm > $R/sweep-rms.log 2>&1
echo "rms sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-rms.csv) lines"
for f in tests-k sanitizer; do grep -E "passed|failed|PASS|FAIL|errors|hazards" $R/$f.log | tail -6; done
cd $OUT && tar czf r.tgz r && rm -rf r
