# s54 call C: exp61 (x and the residual read as streamed below the L2) on the fused add's
# band where compile-static is ahead, then a few rms_norm shapes. Carry .device/exp61.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst61; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp61/*.whl 2>/dev/null
PYTHONPATH=$D python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
X=benchmarks/raw/2026-11-29-h200-v40-l1-eviction/exp61.py
PYTHONPATH=$D timeout 380 python $X $R/exp61-add.csv fused_add_rms_norm --dtypes bfloat16,float32 \
  --hidden 2048,4096,8192 --rows 512,1024,2048,4096 > $R/exp61-add.log 2>&1
echo "exp61 add rc=$? at $(( $(date +%s) - start )) s"
left=$(( 570 - ($(date +%s) - start) ))
PYTHONPATH=$D timeout $left python $X $R/exp61-rms.csv rms_norm --dtypes bfloat16 \
  --hidden 4096,8192 --rows 2048,4096 > $R/exp61-rms.log 2>&1
echo "exp61 rms rc=$? at $(( $(date +%s) - start )) s"
cut -c1-220 $R/exp61-add.log $R/exp61-rms.log
cd $OUT && tar czf r.tgz r && rm -rf r
