# s57 call C: the rest of the GPU suite on 66c5868's wheel (the forward-plan tests ran in
# call B). About 7 minutes. Carry .device/s57.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s57/*.whl)
timeout 560 python scripts/gpu_test.py $W --no-sanitizer -k "not forward_plans" > $R/tests-rest.log 2>&1
echo "rest rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error|FAIL|ok  " $R/tests-rest.log | tail -12 | cut -c1-220
cd $OUT && tar czf r.tgz r && rm -rf r
