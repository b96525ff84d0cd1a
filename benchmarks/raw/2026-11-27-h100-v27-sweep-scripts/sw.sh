# v27 full norm sweep on gpu_sweep.py's grid (11 rows), 283480c's nox wheel, with the rivals.
set -u
run=$1
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
start=$(date +%s)
timeout 580 python benchmarks/gpu_sweep.py --csv $OUT/sweep-norm-run$run.csv --label 283480c --ops rms_norm,fused_add_rms_norm > $OUT/sweep-norm-run$run.log 2>&1
echo "run $run rc=$? $(( $(date +%s) - start )) s"
