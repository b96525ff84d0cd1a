# s48 call F: the norm sweep's second run on the v34 wheel (the noise of two runs).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s48/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
timeout ${1:-300} python benchmarks/gpu_sweep.py --csv $R/sweep-norm-run2.csv --label v34 --ops rms_norm,fused_add_rms_norm > $R/sweep-norm-run2.log 2>&1
echo "norm sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-norm-run2.csv) lines"
cd $OUT && tar czf r.tgz r && rm -rf r
