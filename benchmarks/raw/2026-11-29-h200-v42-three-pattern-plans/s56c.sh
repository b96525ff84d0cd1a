# s56 call C: exp68 (the fused add's residual sum stored st.global.cs; no evict_last
# build past the L2) in the three call patterns, then exp67b (kStreamAdd at rows around
# v41's band). Carry .device/exp68, .device/exp67 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for w in 68 67; do
  D=/tmp/inst$w; rm -rf $D; mkdir -p $D
  pip install -q --no-deps --no-index --target $D .device/exp$w/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
done
c=""
for s in 256x8192 512x8192 1024x2048 1024x4096 1024x8192 1024x16384 1536x8192 2048x4096 \
         2048x8192 4096x4096 4096x8192 16384x4096 16384x8192; do c="$c,fused_add_rms_norm:bfloat16:$s"; done
for s in 1024x8192 4096x8192; do c="$c,fused_add_rms_norm:float16:$s"; done
for s in 1024x4096 4096x4096 16384x2048 4096x8192; do c="$c,fused_add_rms_norm:float32:$s"; done
for s in 4096x4096 4096x8192 16384x8192 2048x16384 16384x16384; do c="$c,rms_norm:bfloat16:$s"; done
for s in 1024x16384 4096x16384 4096x8192 16384x4096; do c="$c,rms_norm:float32:$s"; done
PYTHONPATH=/tmp/inst68 timeout 360 python benchmarks/tools/call_patterns.py $R/exp68.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;sumcs=FUSEDOPS_EXP_SUM_CS=1;noel=FUSEDOPS_EXP_NO_EL=1;both=FUSEDOPS_EXP_SUM_CS=1,FUSEDOPS_EXP_NO_EL=1' \
  --impls compile-static,liger > $R/exp68.log 2>&1
echo "exp68 rc=$? at $(( $(date +%s) - start )) s"
c=""
for dt in bfloat16 float16; do for r in 320 448 512 608 704 768 832 896; do
  c="$c,fused_add_rms_norm:$dt:${r}x16384"; done; done
left=$(( 560 - ($(date +%s) - start) ))
PYTHONPATH=/tmp/inst67 timeout $left python benchmarks/tools/call_patterns.py $R/exp67b.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;anywhere=FUSEDOPS_EXP_STREAM_ADD=1' --impls compile-static,liger \
  > $R/exp67b.log 2>&1
echo "exp67b rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp68.log | cut -c1-200
grep -v Warning $R/exp67b.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
