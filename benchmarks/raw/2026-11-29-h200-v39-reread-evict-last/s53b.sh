# s53 call B: e0aa76f's nox wheel (.device/s53b): the forward-plan and fused add tests and
# both sanitizers, rms_norm's sweep (every dtype, with compile-static), then the ncu
# profile of the fused add's misses (v38's had the shapes transposed) in the time left.
# Each part writes its own r.tgz under $OUT/<part>.
set -u
start=$(date +%s)
S=benchmarks/raw/2026-11-29-h200-v38-add-evict-last
mkdir -p $OUT/b1 $OUT/b2
OUT=$OUT/b1 WHEEL=.device/s53b LABEL=v39 JOBS="rms_norm:float32 rms_norm:bfloat16 rms_norm:float16" \
  BUDGET=480 bash $S/s52c.sh
left=$(( 585 - ($(date +%s) - start) ))
echo "ncu with ${left} s left"
OUT=$OUT/b2 WHEEL=.device/s53b BUDGET=$left bash $S/s52d.sh "fused_add_rms_norm bfloat16 4096x2048,1024x8192" \
  "fused_add_rms_norm float32 1024x4096,512x8192"
