# s58 call A (prepared in s57): exp72, which plan the rotating sweep's misses want. Every
# fused-add miss of v42's rotating sweep (calls E, F of s57) is at 128-1536 rows, and
# most rms_norm misses are there too: batches the L2 holds, whose plans were chosen on
# the same tensors. exp72's switch FUSEDOPS_EXP_PLAN runs one build at every batch:
# `plain` the occupancy build, `latency` the one-block-an-SM build (no cluster split),
# `nosplit` every plan but the wave-and-tail cluster split. All plans give a row the same
# bits (test_a_row_gets_the_same_bits_in_any_batch), so call_patterns.py's bit check
# holds. The largest gaps first, so a short call still reads them. About 8 minutes.
# Carry .device/exp72 (exp72.diff on 66c5868, sm_90 only) and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst72; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp72/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float16 "512x8192 256x8192 256x16384 128x8192"
add fused_add_rms_norm:bfloat16 "256x8192 512x4096 256x16384 512x8192"
add fused_add_rms_norm:float32 "1024x2048 512x4096 256x8192 256x4096 128x8192"
add rms_norm:bfloat16 "512x4096"
add rms_norm:float32 "1024x16384 256x4096 512x8192"
add fused_add_rms_norm:float16 "128x4096 512x4096 1024x2048 1536x4096 256x4096"
add fused_add_rms_norm:bfloat16 "1024x2048 1024x16384 128x8192"
add fused_add_rms_norm:float32 "512x2048 512x8192"
add rms_norm:float16 "128x16384 128x2048"
add rms_norm:float32 "128x16384 128x4096 512x16384 1536x16384"
PYTHONPATH=$D timeout 540 python benchmarks/tools/call_patterns.py $R/exp72.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;plain=FUSEDOPS_EXP_PLAN=plain;latency=FUSEDOPS_EXP_PLAN=latency;nosplit=FUSEDOPS_EXP_PLAN=nosplit' \
  --impls compile-static,liger > $R/exp72.log 2>&1
echo "exp72 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp72.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
