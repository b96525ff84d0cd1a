# s50 call D: silu_and_mul (forward and backward) on gpu_sweep.py's grid, HEAD's nox wheel (cb9e3a8): the second run.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst50d; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s50/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 235 python benchmarks/gpu_sweep.py --csv $R/sweep-silu-run2.csv --label v36 --ops silu_and_mul,silu_and_mul_backward > $R/sweep-silu-run2.log 2>&1
echo "silu sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-silu-run2.csv) lines"
cd $OUT && tar czf r.tgz r && rm -rf r
