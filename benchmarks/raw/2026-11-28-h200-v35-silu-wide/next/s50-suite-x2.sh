# s50 (prepared in s49): HEAD's nox wheel (.device/s50), the GPU suite in two halves, one per GPU, side by side
# (OMP_NUM_THREADS=16 so the CPU halves of the tests do not fight over 32 cores).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for k in 1 2; do
  (CUDA_VISIBLE_DEVICES=$((k-1)) OMP_NUM_THREADS=16 timeout 560 python scripts/gpu_test.py .device/s50/*.whl --no-sanitizer --part $k/2 > $R/part$k.log 2>&1; echo "part $k/2 rc=$? at $(( $(date +%s) - start )) s") &
done
wait
for k in 1 2; do grep -E "passed|failed|PASS|FAIL|holds" $R/part$k.log | grep -v "pytest (GPU" | tail -3; done
cd $OUT && tar czf r.tgz r && rm -rf r
