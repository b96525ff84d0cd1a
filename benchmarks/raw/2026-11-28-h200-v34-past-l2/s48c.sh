# s48 call C: exp48.py at the widths call A did not have (runtime warp counts), past the L2.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp48/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
timeout 400 python .device/scripts/exp48.py $R/exp48c.csv --hidden 6144,10240,14336 --rows 2048,4096,16384,65536 > $R/exp48c.log 2>&1
echo "exp48c rc=$? at $(( $(date +%s) - start )) s"
cat $R/exp48c.log
cd $OUT && tar czf r.tgz r && rm -rf r
