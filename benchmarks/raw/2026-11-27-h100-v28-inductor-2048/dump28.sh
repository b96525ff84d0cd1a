# v28: torch.compile's fused-add kernels at hidden 2048 (float32, bf16) as the sweep builds them
# inductor's Triton source, the PTX and the SASS, to read the loads' cache policies.
set -u
export TORCHINDUCTOR_CACHE_DIR=/tmp/ic TRITON_CACHE_DIR=/tmp/tc
rm -rf /tmp/ic /tmp/tc
mkdir -p /tmp/inst; pip install -q --no-deps --no-index --target /tmp/inst .device/head/*.whl 2>/dev/null; export PYTHONPATH=/tmp/inst
cd benchmarks && python - <<'PY'
import torch
from gpu_sweep import implementation, make_inputs
for dt in (torch.float32, torch.bfloat16):
    fn = implementation("fused_add_rms_norm", "compile", make_inputs("fused_add_rms_norm", 1536, 2048, dt), None)
    for _ in range(3):
        fn()
torch.cuda.synchronize()
print("ok")
PY
cd /tmp && mkdir -p $OUT/d && grep -rl "add_mean_mul_pow_rsqrt" /tmp/ic --include=*.py | head -8 | xargs -I{} cp {} $OUT/d/
n=0; find /tmp/tc -name "*.ptx" | xargs grep -l "add_mean_mul_pow_rsqrt" | while read f; do n=$((n+1)); cp $f $OUT/d/$n-$(basename $f); c=${f%.ptx}.cubin; [ -f $c ] && cuobjdump -sass $c > $OUT/d/$n-$(basename ${f%.ptx}).sass; done
ls -la $OUT/d; cd $OUT && tar czf d.tgz d && rm -rf d
