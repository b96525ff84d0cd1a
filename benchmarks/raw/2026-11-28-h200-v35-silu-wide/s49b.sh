# s49 call: norm sweep run 2 on HEAD's nox wheel.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
D=/tmp/inst2; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s49/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
timeout 500 python benchmarks/gpu_sweep.py --csv $R/sweep-norm-run2.csv --label v35 --ops rms_norm,fused_add_rms_norm > $R/sweep-norm-run2.log 2>&1
echo "norm sweep run2 rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-norm-run2.csv) lines"
cd $OUT && tar czf r.tgz r && rm -rf r
