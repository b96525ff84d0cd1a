# s44 call E: gpu_test.py --sanitizer-only with the peak-RSS report (the committed workload),
# then run_step_output on racecheck of v30's workload, which ran out of host memory in call D.
start=$(date +%s)
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
timeout 260 python scripts/gpu_test.py .device/head/*.whl --sanitizer-only > $OUT/r/san.log 2>&1; echo "san rc=$? at $(( $(date +%s) - start ))s"
grep "^\[gpu_test\]\|sanitize smoke\|SUMMARY\|PASS\|FAIL\|  ok\|killed" $OUT/r/san.log | grep -v "^=========     " | tail -16
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D .device/head/*.whl 2>/dev/null
PYTHONPATH=$D timeout $(( 330 - ($(date +%s) - start) )) python .device/scripts/killed44.py > $OUT/r/killed.log 2>&1; echo "killed44 rc=$? at $(( $(date +%s) - start ))s"
grep -v "^=========     " $OUT/r/killed.log | grep "gpu_test\|FAIL\|ok\|killed\|SUMMARY" | tail -8
