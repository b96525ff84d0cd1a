# s50 call C: the two slices of the GPU suite call A's halves did not reach (6/12, 12/12), side by side
# on the one GPU (8 OpenMP threads each; call B's 110 s limit cut both), then exp51.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for k in 6 12; do
  (OMP_NUM_THREADS=8 PYTHONUNBUFFERED=1 timeout 240 python scripts/gpu_test.py .device/s50/*.whl --no-sanitizer --part $k/12 > $R/part$k-of-12.log 2>&1; echo "part $k/12 rc=$? at $(( $(date +%s) - start )) s") &
done
wait
for k in 6 12; do grep -E "passed|failed|PASS|FAIL|holds" $R/part$k-of-12.log | grep -v "pytest (GPU" | tail -3; done
left=$(( 390 - ($(date +%s) - start) ))
if [ $left -gt 60 ]; then
  D=/tmp/inst51; rm -rf $D; mkdir -p $D
  pip install -q --no-deps --no-index --target $D .device/exp51/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
  PYTHONPATH=$D timeout $(( left * 6 / 10 )) python .device/scripts/exp51.py $R/exp51-fwd.csv --rows 1,16,128,256,512 --settings base,n8,n16 > $R/exp51-fwd.log 2>&1
  echo "exp51 fwd rc=$? at $(( $(date +%s) - start )) s"
  left=$(( 390 - ($(date +%s) - start) ))
  PYTHONPATH=$D timeout $left python .device/scripts/exp51.py $R/exp51-bwd.csv --ops silu_and_mul_backward --dtypes float32 --rows 4096,16384,65536 --settings base,b16 > $R/exp51-bwd.log 2>&1
  echo "exp51 bwd rc=$? at $(( $(date +%s) - start )) s"
fi
cd $OUT && tar czf r.tgz r && rm -rf r
