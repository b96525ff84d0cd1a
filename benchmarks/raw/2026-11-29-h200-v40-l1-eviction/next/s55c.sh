# s55 call C: exp65 (exp63's re-read with and without v40's streamed plan, the 16-bit fused
# add at hidden 16384 from 256 to 1024 rows) and exp66 (v40's 30 missed shapes with the
# plain plan against compile-static and Liger), both in the three patterns of
# patterns_ab.py. About 6 minutes. Carry .device/exp65 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
N=benchmarks/raw/2026-11-29-h200-v40-l1-eviction/next
D=/tmp/inst65; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp65/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for dt in bfloat16 float16; do for r in 256 384 512 640 768 1024; do
  c="$c,fused_add_rms_norm:$dt:${r}x16384"; done; done
PYTHONPATH=$D timeout 260 python $N/patterns_ab.py $R/exp65.csv --cases ${c#,} --rounds 1 \
  --settings 'stream=;plain=FUSEDOPS_EXP_NOSTREAM=1;reread=FUSEDOPS_EXP_NOSTREAM=1,FUSEDOPS_EXP_ADD_REREAD=1;reread_stream=FUSEDOPS_EXP_ADD_REREAD=1' \
  > $R/exp65.log 2>&1
echo "exp65 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-170 $R/exp65.log | grep -v Warning
c=""
add() { for s in ${3//,/ }; do c="$c,$1:$2:$s"; done; }
add fused_add_rms_norm bfloat16 256x16384,512x16384,1024x8192,1536x4096,2048x4096,2048x16384
add fused_add_rms_norm float16 128x4096,128x8192,256x4096,256x8192,256x16384,512x16384
add fused_add_rms_norm float32 128x2048,128x8192,512x8192
add rms_norm bfloat16 1x2048,16x2048,128x2048,512x4096,512x16384
add rms_norm float16 1x2048,16x2048,128x2048,128x16384
add rms_norm float32 128x4096,128x16384,256x4096,256x16384,1024x16384,2048x16384
left=$(( 570 - ($(date +%s) - start) ))
PYTHONPATH=$D timeout $left python $N/patterns_ab.py $R/exp66.csv --cases ${c#,} \
  --settings 'plain=FUSEDOPS_EXP_NOSTREAM=1' > $R/exp66.log 2>&1
echo "exp66 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-170 $R/exp66.log | grep -v Warning
cd $OUT && tar czf r.tgz r && rm -rf r
