# s52 call B (prepared in s51): exp57, the fused add past the L2 reading x and the residual evict_last.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst56; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp57/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 300 python benchmarks/raw/2026-11-29-h200-v37-evict-last/next/exp57.py $R/exp57.csv > $R/exp57.log 2>&1
echo "exp57 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-160 $R/exp57.log
cd $OUT && tar czf r.tgz r && rm -rf r
