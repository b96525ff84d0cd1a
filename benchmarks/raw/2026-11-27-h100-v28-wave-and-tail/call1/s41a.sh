# s41 call 1: (a) the 16-bit fused add's 8-warp occupancy build held to 40 (h6) and 32 (h8)
# registers against 0bb2c6d's nox wheel at hidden 4096; (b) the cluster-wave A/B repeated.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for w in new h6 h8 cw; do mkdir -p /tmp/$w; pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null; done
cat > /tmp/bits.py <<'PY'
import sys, torch, fusedops
torch.manual_seed(0)
for dt in (torch.bfloat16, torch.float16):
    for rows in (1024, 1536, 2048, 3000):
        x = torch.randn(rows, 4096, dtype=dt, device="cuda"); r = torch.randn_like(x); w = torch.randn(4096, dtype=dt, device="cuda")
        o, s = fusedops.fused_add_rms_norm(x, r, w, 1e-6)
        torch.save((o.cpu(), s.cpu()), f"{sys.argv[1]}-{dt}-{rows}.pt")
PY
for w in new h6 h8; do PYTHONPATH=/tmp/$w python /tmp/bits.py /tmp/bits-$w; done
python - > $R/bits.log 2>&1 <<'PY'
import torch, glob
bad = 0
for f in sorted(glob.glob("/tmp/bits-new-*.pt")):
    a = torch.load(f)
    for w in ("h6", "h8"):
        b = torch.load(f.replace("-new-", f"-{w}-"))
        same = all(torch.equal(p.view(torch.int16), q.view(torch.int16)) for p, q in zip(a, b))
        bad += not same
        print(f, w, "same" if same else "DIFFER")
print("differ:", bad)
PY
tail -1 $R/bits.log
A="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 512,768,1024,1280,1536,2048,2560,3072,4096 --hidden 4096"
n=0
for w in new h6 h8 h8 h6 new; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 60 python benchmarks/gpu_sweep.py --csv $R/hold-$n-$w.csv --label $w $A > $R/hold-$n-$w.log 2>&1
  echo "hold $n $w rc=$? $(date +%T)"
done
A="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 128,133,160,200,256,264,300 --hidden 16384,17920,18432,20480,24576,32768"
n=0
for w in new cw cw new; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 80 python benchmarks/gpu_sweep.py --csv $R/cw-$n-$w.csv --label $w $A > $R/cw-$n-$w.log 2>&1
  echo "cw $n $w rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
