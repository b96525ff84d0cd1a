# s54 call D: exp61 at the shapes between call C's (a call's reads and writes 24-192 MiB
# against the H200's L2), to place the threshold. Carry .device/exp61.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst61; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp61/*.whl 2>/dev/null
PYTHONPATH=$D python -c "import torch; print('L2 bytes', torch.cuda.get_device_properties(0).L2_cache_size)"
X=benchmarks/raw/2026-11-29-h200-v40-l1-eviction/exp61.py
run() {  # name op args...
  n=$1; shift
  PYTHONPATH=$D timeout 150 python $X $R/exp61-$n.csv "$@" > $R/exp61-$n.log 2>&1
  echo "exp61 $n rc=$? at $(( $(date +%s) - start )) s"
}
run add1536 fused_add_rms_norm --dtypes bfloat16,float32 --rows 1536 --hidden 2048,4096,8192
run add16384 fused_add_rms_norm --dtypes bfloat16,float32 --rows 256,512 --hidden 16384
run rms1536 rms_norm --dtypes bfloat16,float32 --rows 1536 --hidden 4096,8192,16384
grep -v "^victim\|copies alone" $R/exp61-*.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
