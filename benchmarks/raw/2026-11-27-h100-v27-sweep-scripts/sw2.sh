# v27: norm sweep run 2, then silu_and_mul and its backward twice, 283480c's nox wheel
# (silu kernels as d10774f's), gpu_sweep.py's grid (11 rows), with the rivals.
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
start=$(date +%s)
timeout 200 python benchmarks/gpu_sweep.py --csv $OUT/sweep-norm-run2.csv --label 283480c --ops rms_norm,fused_add_rms_norm > $OUT/sweep-norm-run2.log 2>&1
echo "norm run 2 rc=$? $(( $(date +%s) - start )) s"
for run in 1 2; do
  timeout 190 python benchmarks/gpu_sweep.py --csv $OUT/sweep-silu-run$run.csv --label 283480c --ops silu_and_mul,silu_and_mul_backward > $OUT/sweep-silu-run$run.log 2>&1
  echo "silu run $run rc=$? $(( $(date +%s) - start )) s"
done
