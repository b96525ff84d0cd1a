# s44 call B: gpu_test.py --part 2/2, then --sanitizer-only, then racecheck of the workload's body at 256 x 16384 by
# dtype (all of it: forward and backward of both norms and silu), exit status and peak RSS.
start=$(date +%s); left() { echo $(( 585 - ($(date +%s) - start) )); }
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
W=$(ls .device/head/*.whl)
timeout $(left) python scripts/gpu_test.py $W --no-sanitizer --part 2/2 > $OUT/r/part2.log 2>&1; echo "part2 rc=$? at $(( $(date +%s) - start ))s"
tail -12 $OUT/r/part2.log
timeout $(( $(left) - 5 )) python scripts/gpu_test.py $W --sanitizer-only > $OUT/r/san.log 2>&1; echo "san rc=$? at $(( $(date +%s) - start ))s"
grep -v "^=========     " $OUT/r/san.log | tail -12
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D $W 2>/dev/null
export PYTHONPATH=$D
for dt in float16 bfloat16 float32 float64; do
  [ $(left) -gt 40 ] || break
  timeout $(( $(left) - 5 )) python .device/scripts/rsswrap.py compute-sanitizer --tool racecheck --error-exitcode 99 python .device/scripts/rc44.py $dt 256 16384 all > $OUT/r/rc-$dt.log 2>&1
  echo "racecheck $dt: $(grep -h 'rsswrap\|RACECHECK SUMMARY\|^done' $OUT/r/rc-$dt.log | tr '\n' ' ') at $(( $(date +%s) - start ))s"
done
free -g | head -2
dmesg 2>/dev/null | tail -5
