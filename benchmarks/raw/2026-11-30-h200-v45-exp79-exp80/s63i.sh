# s63 call I (exp84): exp83's two-rows kernel in Triton's form, piece by piece. exp81's ncu
# (call H) had Triton's two-rows program loading x and the residual with plain ld.global
# (ours: ld.global.nc) and reading the stored sum back for the output. FUSEDOPS_EXP_ROWS2 =
# 1 exp83's kernel, 2 its loads plain, 3 the sum read back, 4 both; the plan as exp83's.
# Carry .device/exp84 (exp84.diff on 6e47900, sm_90) and .whl. BUDGET (s).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst84; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp84/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "512x2048 1024x2048 2048x2048 512x4096"
add fused_add_rms_norm:bfloat16 "1024x2048 512x4096"
add rms_norm:bfloat16 "1024x2048"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))
PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp84.csv \
  --cases ${c#,} --rounds 2 --settings 'base=;r1=FUSEDOPS_EXP_ROWS2=1;r2=FUSEDOPS_EXP_ROWS2=2;r3=FUSEDOPS_EXP_ROWS2=3;r4=FUSEDOPS_EXP_ROWS2=4' \
  --impls compile-static,liger > $R/exp84.log 2>&1
echo "exp84 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp84.log | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
