# s56 call A (prepared in s55): exp67, v41's kStreamAdd build (inputs streamed, the stored
# sum read back, two blocks an SM) for the 16-bit fused add at hidden 16384 at every batch
# size, not only in the band just past the L2, in the three call patterns against the
# shipped plan, compile-static and Liger. About 4 minutes. Carry .device/exp67 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst67; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp67/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for dt in bfloat16 float16; do for r in 256 384 640 768 1024 2048 4096 16384; do
  c="$c,fused_add_rms_norm:$dt:${r}x16384"; done; done
PYTHONPATH=$D timeout 400 python benchmarks/tools/call_patterns.py $R/exp67.csv --cases ${c#,} \
  --rounds 1 --settings 'base=;anywhere=FUSEDOPS_EXP_STREAM_ADD=1' --impls compile-static,liger \
  > $R/exp67.log 2>&1
echo "exp67 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp67.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
