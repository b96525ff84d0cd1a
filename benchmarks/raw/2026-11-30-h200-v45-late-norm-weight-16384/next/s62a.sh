# s62 call A (prepared in s61; at most BUDGET, default 300 s). Carry .device/exp78 and .whl.
# exp78: bf16 rms_norm's 32-warp latency blocks of full rows (hidden 16384, on an H200 67-132
# rows), the one 16-bit full-row latency build that loads its weight early without
# weight_guarded_build's guard. In their sm_90 SASS the weight's two loads issue first and
# their 24 unpacking instructions, which wait for them, come before the x loads (../sass.txt).
# exp77 loaded the weight late there and lost in 11 of 12 cells, by up to 2.8% (fp16
# gained). exp78 (exp78.diff on ff55804 or later: exp76's switches plus FUSEDOPS_EXP_GUARD=1)
# adds the always-true guard: one weight load just ahead of the x loads with no unpacking
# between them, the other before the barrier, the unpacking after the rsqrt (48 registers;
# late 45, shipped 55). v20 (H100, v19's kernels) found that guard up to 3.5% slower at 128
# rows on these blocks; this asks it again on the H200, where v43-v45's late weight reversed
# v15's H100 finding. Expected: slower. The three take turns. Controls: bf16 rms_norm
# 16 x 16384 (the cluster kernel), fp16 rms_norm 128 x 16384 (v45's late weight, which neither
# switch moves) and the bf16 fused add 1536 x 4096.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst78; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp78/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
# The switches must reach exp78's wheel, not another fusedops on the path.
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add rms_norm:bfloat16 "16x16384 72x16384 96x16384 128x16384 132x16384"
add rms_norm:float16 "128x16384"
add fused_add_rms_norm:bfloat16 "1536x4096"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))  # 10 s kept for the tar
if [ $left -ge 60 ]; then
  PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp78.csv \
    --cases ${c#,} --rounds 2 \
    --settings 'base=;late=FUSEDOPS_EXP_LATE_FEW=norm;guard=FUSEDOPS_EXP_GUARD=1' \
    --impls compile-static,liger > $R/exp78.log 2>&1
  echo "exp78 rc=$? at $(( $(date +%s) - start )) s"
  grep -v Warning $R/exp78.log | cut -c1-200
else
  echo "exp78 skipped (${left} s left)"
fi
cd $OUT && tar czf r.tgz r && rm -rf r
