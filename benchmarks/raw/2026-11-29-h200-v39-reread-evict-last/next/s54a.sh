# s54 call A (prepared in s53): exp60, L1 eviction priorities on the float32 re-reading
# build (hidden 16384), then ncu of the best-looking setting against compile-static.
# About 4 minutes. Carry .device/exp60 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst60; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp60/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
PYTHONPATH=$D python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
PYTHONPATH=$D timeout 300 python benchmarks/raw/2026-11-29-h200-v39-reread-evict-last/next/exp60.py $R/exp60.csv \
  --dtypes float32 --hidden 16384 --rows 256,512,1024,2048,4096,16384,65536 > $R/exp60.log 2>&1
echo "exp60 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-200 $R/exp60.log
cd $OUT && tar czf r.tgz r && rm -rf r
