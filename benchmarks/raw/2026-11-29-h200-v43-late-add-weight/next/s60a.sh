# s60 call A (prepared in s59): exp76, the late weight in the rest of the latency builds and in
# the cluster kernel. v43's late weight made the fused add's 16- and 32-warp latency blocks at
# hidden 8192 1.6-6.6% faster rotating (exp73). exp76 (exp76.diff on v43, sm_90) asks the
# same of the builds v43 left early:
# - FUSEDOPS_EXP_LATE_FEW=both: every latency build (kFewRows) that loads its weight early,
#   but the guarded 8-warp ones (exp73: late there was up to 12.6% slower): the 16-bit fused
#   add at 32 warps (hidden 16384, 67-132 rows), the float32 fused add at 8 and 16 warps,
#   rms_norm's (16-bit 32 warps, float32 C = 4 at 32 warps, checked and runtime-warp builds);
# - FUSEDOPS_EXP_CLUSTER_LATE=1: the cluster kernel (few rows; the 16-bit fused add's
#   wave-and-tail split: 133-264 rows of 16384, 265-528 of 8192), sm_90 registers bf16 fused
#   add C = 2 48 -> 38, C = 4 72 -> 48.
# Plans probe the shipped kernels, so the plan and the bits are the shipped ones
# (call_patterns checks the bits). The cases: rotating misses of v42 and v43 that run one of
# those kernels, and a control that runs none (bf16 fused add 1536 x 4096: the noise between
# identical settings; float32 fused add 1024 x 2048 most likely takes the occupancy build held
# to 32 registers, a second control for `few`). About 3 minutes. Carry .device/exp76 and .whl (else build it:
# exp76.diff on the v43 commit, `FUSEDOPS_CUDA=1 FUSEDOPS_ABI=stable TORCH_CUDA_ARCH_LIST=9.0
# pip wheel --no-build-isolation --no-deps -w .device/exp76 .` in a torch 2.14.1 environment).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst76; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp76/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:bfloat16 "16x16384 64x16384 128x16384 256x16384 512x8192 16x8192 1536x4096"
add fused_add_rms_norm:float16 "128x16384 256x16384 512x8192"
add fused_add_rms_norm:float32 "256x4096 512x2048 1024x2048 16x8192"
add rms_norm:bfloat16 "512x4096 128x16384"
add rms_norm:float16 "128x16384 16x16384"
add rms_norm:float32 "128x16384 16x16384"
PYTHONPATH=$D timeout 560 python benchmarks/tools/call_patterns.py $R/exp76.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;few=FUSEDOPS_EXP_LATE_FEW=both;cluster=FUSEDOPS_EXP_CLUSTER_LATE=1' \
  --impls compile-static,liger > $R/exp76.log 2>&1
echo "exp76 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp76.log | cut -c1-220
cd $OUT && tar czf r.tgz r && rm -rf r
