# s57 call D: exp71 (FUSEDOPS_EXP_NO_HALVES=1: 16-bit rms_norm past the L2 at C = 2 in 512-
# or 1024-thread blocks instead of kHalves' C = 4 in half the threads) in the three call
# patterns. Calls A and B: at bf16 4096 x 8192 kHalves was 6% slower than compile-static's
# 512-thread kernel where the L2 held no dirty output (the consumer pattern; each kernel
# alone under ncu) and level with it on rotating tensors. Carry .device/exp71 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst71; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp71/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for s in 16384x4096 65536x4096 4096x8192 8192x8192 16384x8192 65536x8192 4096x16384 16384x16384; do
  c="$c,rms_norm:bfloat16:$s"; done
for s in 4096x8192 16384x8192; do c="$c,rms_norm:float16:$s"; done
PYTHONPATH=$D timeout 500 python benchmarks/tools/call_patterns.py $R/exp71.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;c2=FUSEDOPS_EXP_NO_HALVES=1' --impls compile-static,liger \
  > $R/exp71.log 2>&1
echo "exp71 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp71.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
