# s44 call A: gpu_test.py --part 1/2 of HEAD's nox wheel, then --sanitizer-only if time is left.
start=$(date +%s); left() { echo $(( 585 - ($(date +%s) - start) )); }
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
W=$(ls .device/head/*.whl)
timeout $(left) python scripts/gpu_test.py $W --no-sanitizer --part 1/2 > $OUT/r/part1.log 2>&1; echo "part1 rc=$? at $(( $(date +%s) - start ))s"
tail -12 $OUT/r/part1.log
if [ $(left) -gt 190 ]; then
  timeout $(( $(left) - 5 )) python scripts/gpu_test.py $W --sanitizer-only > $OUT/r/san.log 2>&1; echo "san rc=$? at $(( $(date +%s) - start ))s"
  grep -v "^=========     " $OUT/r/san.log | tail -12
fi
