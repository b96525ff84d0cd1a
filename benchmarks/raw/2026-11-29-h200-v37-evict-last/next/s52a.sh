# s52 call A (prepared in s51): exp56, the evict_last builds demoting after the block's barrier.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst56; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp56/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 300 python benchmarks/raw/2026-11-29-h200-v37-evict-last/next/exp56.py $R/exp56.csv > $R/exp56.log 2>&1
echo "exp56 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-160 $R/exp56.log
cd $OUT && tar czf r.tgz r && rm -rf r
