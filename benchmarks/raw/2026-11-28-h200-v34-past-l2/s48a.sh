# s48 call A (prepared in s47): exp48.py on the experiment wheel (prefetch off; the fused
# add in C = 2's order), every op, dtype and setting in one process.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp48/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
timeout 560 python .device/scripts/exp48.py $R/exp48.csv > $R/exp48.log 2>&1
echo "exp48 rc=$? at $(( $(date +%s) - start )) s"
tail -5 $R/exp48.log
cd $OUT && tar czf r.tgz r && rm -rf r
