# s45 call A: HEAD's kernels (a1a8967's nox wheel; csrc unchanged since). The sanitizers
# with the per-dtype racecheck (first GPU run), then the norms on gpu_sweep.py's grid with
# the rivals, twice (each run only if time is left for it).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 260 python scripts/gpu_test.py .device/head/*.whl --sanitizer-only > $R/sanitizer.log 2>&1; echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -v "^=========     " $R/sanitizer.log | grep "gpu_test\|SUMMARY\|PASS\|FAIL\|peak\|killed" | tail -14
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for run in 1 2; do
  left=$(( 585 - ($(date +%s) - start) ))
  if [ $left -lt 120 ]; then echo "norm run $run skipped: $left s left"; continue; fi
  timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-norm-run$run.csv --label c5405f9 --ops rms_norm,fused_add_rms_norm > $R/sweep-norm-run$run.log 2>&1
  echo "norm run $run rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-norm-run$run.csv) lines"
done
