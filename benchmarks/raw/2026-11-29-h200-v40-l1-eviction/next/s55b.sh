# s55 call B (prepared in s54, exp64 added in s55): exp63, the 16-bit fused add at C = 2
# re-reading its residual_out in 32 registers, in the sweep's pattern with the victim probe
# (exp63) and with rotating buffers and a consumer (exp64). About 5 minutes. Carry
# .device/exp63 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
N=benchmarks/raw/2026-11-29-h200-v40-l1-eviction/next
D=/tmp/inst63; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp63/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
PYTHONPATH=$D timeout 120 python $N/exp64.py $R/exp64.csv > $R/exp64.log 2>&1
echo "exp64 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-160 $R/exp64.log
PYTHONPATH=$D timeout 300 python $N/exp63.py $R/exp63.csv \
  --dtypes bfloat16,float16 --hidden 8192,16384 --rows 512,1024,2048,4096,16384,65536 > $R/exp63.log 2>&1
echo "exp63 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-200 $R/exp63.log
cd $OUT && tar czf r.tgz r && rm -rf r
