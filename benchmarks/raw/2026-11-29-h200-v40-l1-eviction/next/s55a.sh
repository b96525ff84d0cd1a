# s55 call A (prepared in s54): both sanitizers on v40's wheel (the workload's new batch
# moving 16/15 of the L2 reaches the streamed builds), exp61 at 72-88 MiB moved (between
# v40's measured 64 and 96), ncu of the 16-bit fused add at 512 x 16384 against
# compile-static, and exp62 (the streamed loads with rotating buffers and a consumer of
# each output). About 8 minutes. Carry .device/s55 (`nox -s build` of HEAD),
# .device/exp61 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s55/*.whl)
timeout 230 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -E "PASS|FAIL|errors|hazards" $R/sanitizer.log | tail -8
D=/tmp/inst61; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp61/*.whl 2>/dev/null
X=benchmarks/raw/2026-11-29-h200-v40-l1-eviction/exp61.py
run() {  # name op args...
  n=$1; shift
  PYTHONPATH=$D timeout 100 python $X $R/exp61-$n.csv "$@" > $R/exp61-$n.log 2>&1
  echo "exp61 $n rc=$? at $(( $(date +%s) - start )) s"
}
# 72, 80 and 88 MiB moved (bf16 fused add and rms_norm rows of 32 KiB moved, float32 fused
# add rows of 64 KiB)
run add-bf16 fused_add_rms_norm --dtypes bfloat16 --rows 2304,2560,2816 --hidden 4096
run add-fp32 fused_add_rms_norm --dtypes float32 --rows 1152,1280,1408 --hidden 4096
run rms-bf16 rms_norm --dtypes bfloat16 --rows 2304,2560,2816 --hidden 8192
PYTHONPATH=$D timeout 150 python benchmarks/raw/2026-11-29-h200-v40-l1-eviction/next/exp62.py \
  $R/exp62.csv > $R/exp62.log 2>&1
echo "exp62 rc=$? at $(( $(date +%s) - start )) s"
cat $R/exp62.log | cut -c1-160
left=$(( 560 - ($(date +%s) - start) ))
OUT=$OUT/ncu WHEEL=.device/s55 BUDGET=$left bash benchmarks/raw/2026-11-29-h200-v38-add-evict-last/s52d.sh \
  "fused_add_rms_norm bfloat16 512x16384,1024x8192"
grep -v "^victim\|copies alone" $R/exp61-*.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
