# s62 call A (prepared in s61; at most BUDGET, default 300 s). Carry .device/exp78 and .whl.
# exp78: bf16 rms_norm's 32-warp latency blocks (hidden 16384, on an H200 67-132 rows), the one
# 16-bit latency build left loading its weight early without weight_guarded_build's guard. In
# their sm_90 SASS the weight's two loads issue first and their 16 unpacking instructions,
# which wait for them, come before the x loads (NOTES.md v45). exp77 loaded the weight late
# there and lost 0.3-2.8% (fp16 gained). exp78 (exp78.diff on ff55804: exp76's switches plus
# FUSEDOPS_EXP_GUARD=1, the always-true guard of the 8-warp builds, which puts the x loads
# first and keeps the weight's before the barrier; 48 registers, late 45, shipped 55) takes
# turns with the shipped kernel and the late one. Controls: bf16 rms_norm 16 x 16384 (the
# cluster kernel), fp16 rms_norm 128 x 16384 (v45's late weight, which neither switch moves)
# and the bf16 fused add 1536 x 4096.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst78; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp78/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add rms_norm:bfloat16 "16x16384 72x16384 96x16384 128x16384 132x16384"
add rms_norm:float16 "128x16384"
add fused_add_rms_norm:bfloat16 "1536x4096"
PYTHONPATH=$E timeout $(( ${BUDGET:-300} - ($(date +%s) - start) )) python benchmarks/tools/call_patterns.py \
  $R/exp78.csv --cases ${c#,} --rounds 2 \
  --settings 'base=;late=FUSEDOPS_EXP_LATE_FEW=norm;guard=FUSEDOPS_EXP_GUARD=1' \
  --impls compile-static,liger > $R/exp78.log 2>&1
echo "exp78 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp78.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
