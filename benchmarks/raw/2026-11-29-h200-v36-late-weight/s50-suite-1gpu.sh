# s50 call A: HEAD's nox wheel (.device/s50), the GPU suite in two halves one after the other on one H200.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for k in 1 2; do
  timeout 290 python scripts/gpu_test.py .device/s50/*.whl --no-sanitizer --part $k/2 > $R/part$k.log 2>&1
  echo "part $k/2 rc=$? at $(( $(date +%s) - start )) s"
done
for k in 1 2; do grep -E "passed|failed|PASS|FAIL|holds" $R/part$k.log | grep -v "pytest (GPU" | tail -3; done
cd $OUT && tar czf r.tgz r && rm -rf r
