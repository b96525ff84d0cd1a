# s49 call: HEAD's nox wheel: the GPU suite's second half and both sanitizers.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 330 python scripts/gpu_test.py .device/s49/*.whl --no-sanitizer --part 2/2 > $R/part2.log 2>&1; echo "part 2/2 rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|PASS|FAIL" $R/part2.log | tail -4
left=$(( 588 - ($(date +%s) - start) ))
timeout $left python scripts/gpu_test.py .device/s49/*.whl --sanitizer-only > $R/sanitizer.log 2>&1; echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -v "^=========     " $R/sanitizer.log | grep "peak\|  ok\|FAIL\|PASS" | tail -12
cd $OUT && tar czf r.tgz r && rm -rf r
