# s63 call G (exp83): two rows a block. exp81's Triton kernel with two rows a program at 8
# warps, loads plain, ran 5.0% / 2.8% / 1.5% faster than ours at the float32 fused add
# 1024 x 2048 (same / rotating / consumer). FUSEDOPS_EXP_ROWS2=1 launches, past the latency
# plan, every full row of 1-2 vectors a thread in 4-16 warps as exp83.diff's two-rows
# kernel (both rows' loads before one barrier, the weight once; the one-row kernel's sum
# order, so the same bits; it also takes rows the shipped plan runs evict_last past the
# L2). Carry .device/exp83 (exp83.diff on 6e47900, sm_90) and .whl. BUDGET (s).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst83; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp83/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "512x2048 1024x2048 2048x2048 4096x2048 512x4096 1024x4096"
add fused_add_rms_norm:bfloat16 "1024x2048 4096x2048 512x4096"
add fused_add_rms_norm:float16 "512x4096"
add rms_norm:bfloat16 "1024x2048 512x4096 16384x2048"
add rms_norm:float32 "1024x2048"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))
PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp83.csv \
  --cases ${c#,} --rounds 2 --settings 'base=;rows2=FUSEDOPS_EXP_ROWS2=1' \
  --impls compile-static,liger > $R/exp83.log 2>&1
echo "exp83 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp83.log | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
