# v27 call 4: 283480c's nox wheel, the forward-plan tests, then memcheck and racecheck.
set -u
W=$(ls .device/wheel/*.whl)
timeout 300 python scripts/gpu_test.py --no-sanitizer -k "test_cuda_forward_plans" $W > $OUT/gpu_test-b.log 2>&1
echo "rc=$?" | tee -a $OUT/gpu_test-b.log
tail -5 $OUT/gpu_test-b.log
timeout 280 python scripts/gpu_test.py --sanitizer-only $W > $OUT/san.log 2>&1
echo "rc=$?" | tee -a $OUT/san.log
tail -6 $OUT/san.log
