# s49 call: silu_and_mul (forward and backward) on gpu_sweep.py's grid, HEAD's nox wheel.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
D=/tmp/inst49c; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s49/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops, sys; print(fusedops.__file__)"
timeout 480 python benchmarks/gpu_sweep.py --csv $R/sweep-silu-run1.csv --label v35 --ops silu_and_mul,silu_and_mul_backward > $R/sweep-silu-run1.log 2>&1
echo "silu sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-silu-run1.csv) lines"
cd $OUT && tar czf r.tgz r && rm -rf r
