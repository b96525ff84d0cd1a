# s42 call 1: two sm_90 builds of 821ea32 taking turns (ab_runs.py): base has the
# wave-and-tail split turned off; new has the float32 silu forward's 8-byte band at
# (262144, 524288] vectors (prepared.diff) and the split also at 2 vectors a thread for
# blocks of 512+ threads (hidden 8192-16384). The silu shapes differ only by the band, the
# fused-add shapes only by the split. Then the same bits at both, and ncu of fp16 silu
# forward 1024 and 2048 x 2048 (HEAD's nox wheel) with torch.compile and Liger.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/new/*.whl --out $R/silu --timeout 100 -- \
  --impls fusedops --placements 1 --ops silu_and_mul --dtypes float32 \
  --rows 128,192,256,320,384,512,768,1024 --hidden 2048,4096,8192,16384 > $R/silu.log 2>&1
echo "ab silu rc=$? $(date +%T)"; tail -4 $R/silu.log
for spec in "split4 133,200,256,264 18432,22528,26624,28672,30720" "split2 200,264,300,400,512,528 8192,12288,16384"; do
  set -- $spec
  python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/new/*.whl --out $R/$1 --timeout 100 -- \
    --impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows $2 --hidden $3 > $R/$1.log 2>&1
  echo "ab $1 rc=$? $(date +%T)"; tail -4 $R/$1.log
done
cat > /tmp/sb.py <<'PY'
import sys, torch, fusedops
torch.manual_seed(0)
outs = []
for rows, h in ((320, 4096), (384, 4096), (512, 4096), (768, 2048), (1024, 2048), (128, 16384), (192, 8192)):
    outs.append(fusedops.silu_and_mul(torch.randn(rows, 2 * h, device="cuda")).cpu())
for dt in (torch.bfloat16, torch.float16):
    for rows, h in ((133, 22528), (200, 26624), (264, 28672), (160, 30720), (256, 18432), (256, 16384), (400, 12288), (512, 8192)):
        x, r = (torch.randn(rows, h, device="cuda", dtype=dt) for _ in range(2))
        w = torch.randn(h, device="cuda", dtype=dt)
        outs += [t.cpu() for t in fusedops.fused_add_rms_norm(x, r, w)]
torch.save(outs, sys.argv[1])
PY
for w in base new; do mkdir -p /tmp/$w; pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null; PYTHONPATH=/tmp/$w python /tmp/sb.py /tmp/sb-$w.pt; done
python -c "
import torch
a, b = torch.load('/tmp/sb-base.pt'), torch.load('/tmp/sb-new.pt')
bits = lambda t: t.view(torch.int16) if t.element_size() == 2 else t.view(torch.int32)
print('outputs differ:', sum(not torch.equal(bits(p), bits(q)) for p, q in zip(a, b)), 'of', len(a))
" > $R/bits.log 2>&1; cat $R/bits.log
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
PYTHONPATH=$D timeout 150 ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/ncu-silu-fp16 python benchmarks/tools/ncu_fwd_probe.py --op silu_and_mul --dtype float16 --shapes 1024x2048,2048x2048 --impls fusedops,compile,liger --repeat 2 > $R/ncu-silu-fp16.log 2>&1
echo "ncu rc=$? $(date +%T)"
ncu --import $R/ncu-silu-fp16.ncu-rep --page raw --csv > $R/ncu-silu-fp16.csv 2>&1; rm -f $R/ncu-silu-fp16.ncu-rep
cd $OUT && tar czf r.tgz r && rm -rf r
