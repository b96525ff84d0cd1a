# s63 call E (exp82): exp81 had a Triton kernel in inductor's form, its loads plain, ahead of
# ours in all three patterns at the float32 fused add 1024 x 2048 and 512 x 4096. Does our
# kernel get that by reading the stored residual sum back for the output (and the weight
# then), as that kernel does? Carry .device/exp82 (exp82.diff on 6e47900, sm_90) and .whl.
# FUSEDOPS_EXP_LOAD launches every single-pass build that reads x and the residual plainly
# at 1-2 vectors a thread (the fused add's re-reads: not its guarded 16-bit 8-warp
# latency builds) as
#   policy            x and the residual loaded as Triton's evict_first (exp80's),
#   plain-reread      plain loads, the stored sum read back plainly, the weight late,
#   plain-reread-ef   the same, the read-back with the evict_first policy (inductor's),
#   policy-reread-ef  all three loads evict_first, as inductor's kernel has them,
# the plan and the bits the shipped ones'. Three patterns, two rounds. BUDGET (s).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst82; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp82/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "128x8192 256x4096 512x2048 512x4096 1024x2048 1024x4096 2048x2048"
add fused_add_rms_norm:bfloat16 "512x4096 1024x2048 256x8192"
add fused_add_rms_norm:float16 "512x4096"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))
S='base=;policy=FUSEDOPS_EXP_LOAD=policy;plain-reread=FUSEDOPS_EXP_LOAD=plain-reread'
S="$S;plain-reread-ef=FUSEDOPS_EXP_LOAD=plain-reread-ef;policy-reread-ef=FUSEDOPS_EXP_LOAD=policy-reread-ef"
PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp82.csv \
  --cases ${c#,} --rounds 2 --settings "$S" --impls compile-static,liger > $R/exp82.log 2>&1
echo "exp82 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp82.log | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
