# s42 call 2: sm_90 builds taking turns (ab_runs.py). base: 821ea32 with the wave-and-tail
# split off. new: the split for every 16-bit fused add of 2+ vectors a thread and an even
# warp count (not only 4 vectors a thread), and the float32 silu forward's 8-byte band at
# (262144, 524288] vectors only. Then which kernel each fused-add shape ran (new), and the
# same bits at both.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/new/*.whl --out $R/silu --timeout 100 -- \
  --impls fusedops --placements 1 --ops silu_and_mul --dtypes float32 \
  --rows 128,192,256,320,384,512,768,1024 --hidden 2048,4096,8192 > $R/silu.log 2>&1
echo "ab silu rc=$? $(date +%T)"; tail -4 $R/silu.log
ROWS=200,264,300,400,512,700,1024,1536,2048,4096
python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/new/*.whl --out $R/split --timeout 150 -- \
  --impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows $ROWS --hidden 2048,4096,8192,12288,16384 > $R/split.log 2>&1
echo "ab split rc=$? $(date +%T)"; tail -4 $R/split.log
for w in base new; do mkdir -p /tmp/$w; pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null; done
cat > /tmp/kn.py <<'PY'
import sys, torch, fusedops
from torch.profiler import profile, ProfilerActivity
rows_list = [int(v) for v in sys.argv[1].split(",")]
for dt in (torch.bfloat16, torch.float16):
    for h in (2048, 4096, 8192, 10240, 12288, 14336, 16384):
        w = torch.randn(h, device="cuda", dtype=dt)
        for rows in rows_list:
            x, r = (torch.randn(rows, h, device="cuda", dtype=dt) for _ in range(2))
            fusedops.fused_add_rms_norm(x, r, w); torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                fusedops.fused_add_rms_norm(x, r, w); torch.cuda.synchronize()
            names = {e.name for e in p.events() if "rms_norm" in e.name}
            print(str(dt)[6:], h, rows, "cluster" if any("cluster" in n for n in names) else "single", flush=True)
PY
PYTHONPATH=/tmp/new python /tmp/kn.py 133,200,264,265,300,400,512,528,529,700,792,1024,1056,1057,1320,1536,2048,2112,2113,3000,4096,4224,4225 > $R/kernels-new.txt 2>&1; echo "kernels rc=$?"
cat > /tmp/sb.py <<'PY'
import sys, torch, fusedops
torch.manual_seed(0)
outs = []
for rows, h in ((192, 4096), (320, 2048), (384, 4096), (512, 4096), (768, 2048), (1024, 2048), (128, 16384)):
    outs.append(fusedops.silu_and_mul(torch.randn(rows, 2 * h, device="cuda")).cpu())
for dt in (torch.bfloat16, torch.float16):
    for rows, h in ((200, 16384), (264, 12288), (300, 8192), (512, 8192), (700, 4096), (1024, 4096), (1536, 4096), (2048, 2048), (4096, 2048), (3000, 2048), (133, 22528)):
        x, r = (torch.randn(rows, h, device="cuda", dtype=dt) for _ in range(2))
        w = torch.randn(h, device="cuda", dtype=dt)
        outs += [t.cpu() for t in fusedops.fused_add_rms_norm(x, r, w)]
torch.save(outs, sys.argv[1])
PY
for w in base new; do PYTHONPATH=/tmp/$w python /tmp/sb.py /tmp/sb-$w.pt; done
python -c "
import torch
a, b = torch.load('/tmp/sb-base.pt'), torch.load('/tmp/sb-new.pt')
bits = lambda t: t.view(torch.int16) if t.element_size() == 2 else t.view(torch.int32)
print('outputs differ:', sum(not torch.equal(bits(p), bits(q)) for p, q in zip(a, b)), 'of', len(a))
" > $R/bits.log 2>&1; cat $R/bits.log
cd $OUT && tar czf r.tgz r && rm -rf r
