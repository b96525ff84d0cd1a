# s63 call K (exp85): the rest of Triton's two-row form in exp83's kernel. The SASS (sass-*.txt) had
# Triton's program load the weight (LDG.E.EL) after its barrier and issue every read-back of
# the stored sum before computing any output; exp84 loaded the weight before the barrier and
# read each vector back just before its store. exp85.diff (on 6e47900; contains exp83-84):
# the read-backs all issued first, and FUSEDOPS_EXP_ROWS2 = 1 exp83's kernel, 3 the read-back,
# 4 plain loads and the read-back, 5 those and the weight late evict_last (Triton's form
# whole), 6 plain loads, the sum held, the weight late evict_last, 7 exp83's kernel with the
# weight late, plainly; the plan as exp83's. Carry .device/exp85 and .whl. BUDGET (s).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst85; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp85/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "512x2048 1024x2048 2048x2048 512x4096"
add fused_add_rms_norm:bfloat16 "1024x2048"
add rms_norm:bfloat16 "1024x2048"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))
PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp85.csv \
  --cases ${c#,} --rounds 2 --settings 'base=;r1=FUSEDOPS_EXP_ROWS2=1;r3=FUSEDOPS_EXP_ROWS2=3;r4=FUSEDOPS_EXP_ROWS2=4;r5=FUSEDOPS_EXP_ROWS2=5;r6=FUSEDOPS_EXP_ROWS2=6;r7=FUSEDOPS_EXP_ROWS2=7' \
  --impls compile-static,liger > $R/exp85.log 2>&1
echo "exp85 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp85.log | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
