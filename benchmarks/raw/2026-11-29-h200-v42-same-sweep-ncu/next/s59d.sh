# s59 call D (prepared in s58): exp75, the 16-bit fused add's rows of 1024 threads (hidden
# 16384) as kHalves: C = 4 in 512 threads, adding in C = 2's order. ncu put ours alone 7.2%
# behind Liger (512-thread blocks) at bf16 1024 x 16384 rotating; past the L2 the fused add
# takes kHalves today only where its C = 2 blocks leave an SM few warps.
# FUSEDOPS_EXP_ADD_HALVES=past runs kHalves for those rows past the L2; `all` also at the
# batches the plain build takes (here 320 and 896 rows; not the latency build's one wave, the
# cluster split at 133-264 rows, nor kStreamAdd's band at 361-840, which keep theirs). Same
# bits by construction (call_patterns checks). From 1536 rows `past` replaces the evict_last
# C = 2 build, so there it changes three things at once: block size, evict_last (the kHalves
# add build has none) and the weight's timing (loaded late at C = 4). Three patterns, with
# compile-static and Liger. About 5 minutes. Carry .device/exp75 (exp75.diff on 5c45160,
# sm_90) and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst75; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp75/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:bfloat16 "1024x16384 320x16384 896x16384 1536x16384 2048x16384 4096x16384"
add fused_add_rms_norm:float16 "1024x16384 320x16384 2048x16384"
add fused_add_rms_norm:bfloat16 "16384x16384"
PYTHONPATH=$D timeout 540 python benchmarks/tools/call_patterns.py $R/exp75.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;past=FUSEDOPS_EXP_ADD_HALVES=past;all=FUSEDOPS_EXP_ADD_HALVES=all' \
  --impls compile-static,liger > $R/exp75.log 2>&1
echo "exp75 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp75.log | cut -c1-220
cd $OUT && tar czf r.tgz r && rm -rf r
