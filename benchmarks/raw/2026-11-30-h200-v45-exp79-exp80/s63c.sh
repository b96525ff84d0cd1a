# s63 call C (exp80): which part of inductor's fused add closes its lead rotating. Carry
# .device/exp80 (exp80.diff on 6e47900, sm_90) and .whl. FUSEDOPS_EXP_LOAD launches every
# single-pass build that reads x and the residual plainly at 1-2 vectors a thread with
#   cs             ld.global.cs loads (exp79's),
#   policy         Triton's evict_first loads as inductor emits them (L1::evict_first and a
#                  createpolicy L2 evict_first hint),
#   cs-reread, policy-reread   those loads, and (the fused add past the latency plan) the
#                  stored residual sum read back for the output and the weight loaded then,
#                  as inductor's kernel does (and kStreamAdd at 16-bit hidden 16384),
# the plan and the bits the shipped ones'. Cases: the rotating fused-add misses against
# compile-static at 16-64 MiB moved (both runs of session 62, and session 61's 512 x 4096),
# the float32 same-tensor misses against compile at 1024 x 4096 and 2048 x 2048, and the
# 64 MiB bf16 1024 x 8192 that v40-v41 measured; three patterns, two rounds. BUDGET (s).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst80; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp80/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "256x4096 512x2048 512x4096 1024x2048 1024x4096 2048x2048"
add fused_add_rms_norm:bfloat16 "512x4096 1024x2048 512x8192 1024x8192"
add fused_add_rms_norm:float16 "256x8192 512x8192"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))
S='base=;cs=FUSEDOPS_EXP_LOAD=cs;policy=FUSEDOPS_EXP_LOAD=policy'
S="$S;cs-reread=FUSEDOPS_EXP_LOAD=cs-reread;policy-reread=FUSEDOPS_EXP_LOAD=policy-reread"
PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp80.csv \
  --cases ${c#,} --rounds 2 --settings "$S" --impls compile-static,liger > $R/exp80.log 2>&1
echo "exp80 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp80.log | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
