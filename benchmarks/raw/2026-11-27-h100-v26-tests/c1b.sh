set -u
W=$(ls .device/wheel/*.whl)
timeout 590 python scripts/gpu_test.py --sanitizer-only $W > $OUT/san.log 2>&1
echo "rc=$?" | tee -a $OUT/san.log
tail -25 $OUT/san.log
