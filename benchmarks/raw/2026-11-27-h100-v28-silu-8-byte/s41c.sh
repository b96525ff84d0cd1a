# s41 call 7: float32 silu_and_mul forward in 8-byte vectors up to 2^20 vectors (s32, an
# sm_90 build of 402783c + FUSEDOPS_EXP_SILU32) against 7616a3b's nox wheel (head):
# same outputs, an A/B over rows 128-16384, then torch.compile beside s32 once.
set -u
R=$OUT/r; mkdir -p $R
for w in head s32; do mkdir -p /tmp/$w; pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null; done
cat > /tmp/sb.py <<'PY'
import sys, torch, fusedops
torch.manual_seed(0)
outs = []
for rows, h in ((256, 4096), (512, 2048), (1024, 4096), (128, 16384), (2048, 2048), (1536, 8192)):
    x = torch.randn(rows, 2 * h, device="cuda")
    outs.append(fusedops.silu_and_mul(x).cpu())
torch.save(outs, sys.argv[1])
PY
for w in head s32; do PYTHONPATH=/tmp/$w python /tmp/sb.py /tmp/sb-$w.pt; done
python -c "
import torch
a, b = torch.load('/tmp/sb-head.pt'), torch.load('/tmp/sb-s32.pt')
print('outputs differ:', sum(not torch.equal(p.view(torch.int32), q.view(torch.int32)) for p, q in zip(a, b)), 'of', len(a))
" > $R/bits.log 2>&1; cat $R/bits.log
A="--placements 1 --ops silu_and_mul --dtypes float32 --rows 128,256,512,1024,1536,2048,4096,16384 --hidden 2048,4096,8192,16384"
n=0
for w in head s32 s32 head; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 60 python benchmarks/gpu_sweep.py --impls fusedops --csv $R/ab-$n-$w.csv --label $w $A > $R/ab-$n-$w.log 2>&1
  echo "ab $n $w rc=$? $(date +%T)"
done
PYTHONPATH=/tmp/s32 timeout 120 python benchmarks/gpu_sweep.py --impls fusedops,compile --csv $R/rivals-s32.csv --label s32 $A > $R/rivals-s32.log 2>&1
echo "rivals rc=$? $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
