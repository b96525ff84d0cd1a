# s60 call 2: exp76's `few` setting (FUSEDOPS_EXP_LATE_FEW=both) alone, at the cases call 1 did
# not reach (it stopped at the `cluster` setting's launch error, fp16 fused add 256 x 16384),
# and at more rows of the one build where call 1 saw a gain: the 16-bit fused add's 32-warp
# latency blocks (hidden 16384, 67-132 rows on an H200). Carry .device/exp76 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst76; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp76/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:bfloat16 "72x16384 96x16384 128x16384 132x16384 1536x4096"
add fused_add_rms_norm:float16 "72x16384 96x16384 132x16384 256x16384 512x8192"
add fused_add_rms_norm:float32 "256x4096 512x2048 1024x2048 16x8192 96x8192"
add rms_norm:bfloat16 "512x4096 128x16384"
add rms_norm:float16 "128x16384 16x16384"
add rms_norm:float32 "128x16384 16x16384"
PYTHONPATH=$D timeout 400 python benchmarks/tools/call_patterns.py $R/exp76b.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;few=FUSEDOPS_EXP_LATE_FEW=both' \
  --impls compile-static,liger > $R/exp76b.log 2>&1
echo "exp76b rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp76b.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
