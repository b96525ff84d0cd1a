# s44 call D: racecheck of the workload body at 256 x 16384 in float32 and float64 alone, then
# v30's workload (256 x 16384 in the loop) plain and under racecheck, on HEAD's nox wheel.
start=$(date +%s)
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D .device/head/*.whl 2>/dev/null
export PYTHONPATH=$D
for dt in float32 float64; do
  timeout 60 python .device/scripts/rsswrap.py compute-sanitizer --tool racecheck --error-exitcode 99 python .device/scripts/rc44.py $dt 256 16384 all > $OUT/r/rc-$dt.log 2>&1
  echo "racecheck $dt: $(grep -h 'rsswrap\|RACECHECK SUMMARY\|^done' $OUT/r/rc-$dt.log | tr '\n' ' ') at $(( $(date +%s) - start ))s"
done
timeout 60 python .device/scripts/rsswrap.py python .device/scripts/workload_v30.py > $OUT/r/plain-v30.log 2>&1
echo "plain v30 workload: $(grep -h 'rsswrap\|sanitize smoke' $OUT/r/plain-v30.log | tr '\n' ' ')"
timeout 400 python .device/scripts/rsswrap.py compute-sanitizer --tool racecheck --error-exitcode 99 python .device/scripts/workload_v30.py > $OUT/r/rc-v30.log 2>&1
echo "racecheck v30 workload: $(grep -h 'rsswrap\|RACECHECK SUMMARY\|sanitize smoke\|Error' $OUT/r/rc-v30.log | tr '\n' ' ') at $(( $(date +%s) - start ))s"
grep -v "^=========     " $OUT/r/rc-v30.log | tail -8
