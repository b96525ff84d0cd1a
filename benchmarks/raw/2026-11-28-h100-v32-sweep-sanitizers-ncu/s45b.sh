# s45 call B: silu_and_mul and its backward on gpu_sweep.py's grid with the rivals, twice,
# HEAD's kernels (a1a8967's nox wheel).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for run in 1 2; do
  left=$(( 585 - ($(date +%s) - start) ))
  timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-silu-run$run.csv --label c5405f9 --ops silu_and_mul,silu_and_mul_backward > $R/sweep-silu-run$run.log 2>&1
  echo "silu run $run rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-silu-run$run.csv) lines"
done
