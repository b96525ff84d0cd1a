# s41 call 2: HEAD's nox wheel (head: the wave-and-tail split, the per-thread occupancy
# cache) against 0bb2c6d's (new): same bits, the forward-plan tests, the sanitizers,
# an A/B over the split's band, and the host cost per call in the one-wave band.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for w in new head; do
  mkdir -p /tmp/$w
  pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null
  PYTHONPATH=/tmp/$w timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$? $(date +%T)"
done
python benchmarks/tools/same_bits.py compare $R/bits-new.json $R/bits-head.json > $R/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -1 $R/bits-compare.txt
PYTHONPATH=/tmp/head FUSEDOPS_REQUIRE_GPU=1 timeout 150 python -m pytest -q -p no:cacheprovider tests/ops/test_cuda_forward_plans.py > $R/forward-plans-head.log 2>&1; echo "forward plans rc=$? $(date +%T)"; tail -3 $R/forward-plans-head.log
A="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 128,133,160,200,256,264,300 --hidden 16384,17920,18432,20480,24576,32768"
n=0
for w in new head head new; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 80 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$w.csv --label $w $A > $R/ab-$n-$w.log 2>&1
  echo "ab $n $w rc=$? $(date +%T)"
done
n=0
for w in new head head new; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 60 python benchmarks/host_overhead.py --device cuda --rows 256 --hidden 4096 --csv $R/host-$n-$w.csv > $R/host-$n-$w.txt 2>&1
  echo "host $n $w rc=$? $(date +%T)"
done
timeout 230 python scripts/gpu_test.py .device/head/*.whl --sanitizer-only > $R/sanitizer-head.log 2>&1; echo "sanitizer rc=$? $(date +%T)"; tail -3 $R/sanitizer-head.log
cd $OUT && tar czf r.tgz r && rm -rf r
