# s59 call A (prepared in s58): exp73, the fused add's C = 2 latency builds with the weight
# loaded late. ncu (s58 calls B, E, F) put our kernel alone behind the rival's by more than the
# 5.3% of call-to-call spread at two fused-add rotating misses that run a latency build: bf16
# 256 x 8192 (+12.1% against compile-static; 59 registers against 37) and float32 128 x 8192
# (+7.1% against Liger). exp73's FUSEDOPS_EXP_LATE_ADD=1 launches the 16-bit and float32 C = 2
# latency builds with the weight loaded after the reduction in the source (cuobjdump, sm_90:
# bf16 16 warps 59 -> 48 registers, fp16 58 -> 51, runtime-warp builds 55-56 -> 48, float32
# 38 -> 38; the guarded 8-warp builds, 63-64 at hidden 4096, go to the runtime-warp build
# instead; in the SASS the weight's loads issue after x's, ahead of the barrier). Plans probe
# their kernels with the switch off, so the plan, and the bits, are the shipped ones
# (call_patterns checks the bits). Cases: the fused add's misses of both v42 sweeps at
# 128-1536 rows of hidden 4096-8192, three patterns, with compile-static and Liger. Three run
# no latency build (bf16 512 x 8192: the cluster split; fp16 1536 x 4096 and float32 256 x
# 8192: the occupancy build), so there `late` runs what `base` runs: the noise between two
# identical settings. About 5 minutes. Carry .device/exp73 and .whl (else build it:
# exp73.diff on 2835231, `FUSEDOPS_CUDA=1 FUSEDOPS_ABI=stable TORCH_CUDA_ARCH_LIST=9.0 pip
# wheel --no-build-isolation --no-deps -w .device/exp73 .` in a torch 2.14.1 environment).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst73; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp73/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:bfloat16 "256x8192 512x4096 256x4096 128x8192 512x8192"
add fused_add_rms_norm:float16 "256x8192 256x4096 128x8192 128x4096 512x4096 1536x4096"
add fused_add_rms_norm:float32 "128x8192 256x8192"
PYTHONPATH=$D timeout 540 python benchmarks/tools/call_patterns.py $R/exp73.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;late=FUSEDOPS_EXP_LATE_ADD=1' \
  --impls compile-static,liger > $R/exp73.log 2>&1
echo "exp73 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp73.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
