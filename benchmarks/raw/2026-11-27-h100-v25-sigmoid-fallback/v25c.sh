# v25 call 3: silu_and_mul forward + backward, full sweep with rivals, at 45c24f9 (h1), twice if time allows
set -u
T0=$(date +%s); left() { echo $(( 585 - ($(date +%s) - T0) )); }
mkdir -p /tmp/h1; pip install -q --no-deps --no-index --target /tmp/h1 .device/h1/*.whl 2>/dev/null
pip install -q --no-deps --no-index --target /tmp/lg .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
for r in 1 2; do s=$(date +%s)
  PYTHONPATH=/tmp/h1:/tmp/lg timeout $(left) python benchmarks/gpu_sweep.py --ops silu_and_mul,silu_and_mul_backward --label 45c24f9 --csv $OUT/sweep-silu-45c24f9-run$r.csv > /dev/null 2>$OUT/sweep-run$r.err
  echo "run$r rc=$? $(( $(date +%s) - s )) s left $(left)"; tail -2 $OUT/sweep-run$r.err
  [ $(left) -lt 280 ] && break
done
