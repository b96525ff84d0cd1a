# v26 call 7 (call 6 ran it before fusedops was installed and failed): torch.compile's fused-add kernel as the sweep builds it (1024 x 8192 fp16 and bf16):
# inductor's Triton source, Triton's PTX and the cubin's SASS, to read its loads' cache policies.
set -u
export TORCHINDUCTOR_CACHE_DIR=/tmp/ic TRITON_CACHE_DIR=/tmp/tc
rm -rf /tmp/ic /tmp/tc
mkdir -p /tmp/inst; pip install -q --no-deps --no-index --target /tmp/inst .device/wheel/*.whl 2>/dev/null; export PYTHONPATH=/tmp/inst
cd benchmarks && python - <<'PY'
import torch
from gpu_sweep import implementation, make_inputs
for dt in (torch.float16, torch.bfloat16):
    fn = implementation("fused_add_rms_norm", "compile", make_inputs("fused_add_rms_norm", 1024, 8192, dt), None)
    for _ in range(3):
        fn()
torch.cuda.synchronize()
print("ok")
PY
cd /tmp && mkdir -p $OUT/d && grep -rl "fused__to_copy_add_mean" /tmp/ic --include=*.py | head -8 | xargs -I{} cp {} $OUT/d/
find /tmp/tc -name "*.ptx" | xargs grep -l "fused__to_copy_add_mean" | while read f; do cp $f $OUT/d/; c=${f%.ptx}.cubin; [ -f $c ] && cuobjdump -sass $c > $OUT/d/$(basename ${f%.ptx}).sass; done
ls -la $OUT/d; cd $OUT && tar czf d.tgz d && rm -rf d
