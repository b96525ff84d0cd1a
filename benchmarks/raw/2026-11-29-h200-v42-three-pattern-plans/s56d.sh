# s56 call D: exp69 (the fused add's kEvictLastX build past the L2 in 1024-thread blocks:
# 16-bit hidden 16384, float32 8192) and exp70 (16-bit rms_norm at hidden 16384 past the
# L2 without its evict_last kHalves build) in the three call patterns. The exp69 wheel
# (exp68-69.diff) holds both switches. Carry .device/exp69 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst69; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp69/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for dt in bfloat16 float16; do for r in 1024 1536 2048 4096 16384; do
  c="$c,fused_add_rms_norm:$dt:${r}x16384"; done; done
for r in 1024 2048 4096 16384; do c="$c,fused_add_rms_norm:float32:${r}x8192"; done
PYTHONPATH=$D timeout 300 python benchmarks/tools/call_patterns.py $R/exp69.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;el1024=FUSEDOPS_EXP_EL_1024=1' --impls compile-static,liger \
  > $R/exp69.log 2>&1
echo "exp69 rc=$? at $(( $(date +%s) - start )) s"
c=""
for dt in bfloat16 float16; do for r in 2048 3072 4096 6144; do
  c="$c,rms_norm:$dt:${r}x16384"; done; done
left=$(( 420 - ($(date +%s) - start) ))
PYTHONPATH=$D timeout $left python benchmarks/tools/call_patterns.py $R/exp70.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;noel=FUSEDOPS_EXP_NO_EL=1' --impls compile-static,liger \
  > $R/exp70.log 2>&1
echo "exp70 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp69.log | cut -c1-170
grep -v Warning $R/exp70.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
