# v27 call 9: 0bb2c6d's nox wheel (the 16-bit fused add at C = 4 for hidden 16392-32768),
# the whole GPU suite.
set -u
W=$(ls .device/new/*.whl)
timeout 590 python scripts/gpu_test.py --no-sanitizer $W > $OUT/gpu_test-0bb2c6d.log 2>&1
echo "rc=$?" | tee -a $OUT/gpu_test-0bb2c6d.log
tail -6 $OUT/gpu_test-0bb2c6d.log
