# s42 calls 4-5: 1f581b6's nox wheel. Call 4: the sanitizers, then the norms on
# gpu_sweep.py's grid (11 rows) with the rivals, twice. Call 5: silu_and_mul and its
# backward on the grid with the rivals, twice.
# usage: s42d.sh LABEL norm|silu [san]  (call 5 ran `silu san`: the sanitizers again, on a
# workload with 200 x 16384 added)
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
if [ "$2" = norm ] || [ "${3:-}" = san ]; then
  timeout 200 python scripts/gpu_test.py .device/head/*.whl --sanitizer-only > $R/sanitizer.log 2>&1; echo "sanitizer rc=$? $(date +%T)"; tail -3 $R/sanitizer.log
fi
if [ "$2" = norm ]; then OPS=rms_norm,fused_add_rms_norm; else OPS=silu_and_mul,silu_and_mul_backward; fi
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
start=$(date +%s)
for run in 1 2; do
  timeout 210 python benchmarks/gpu_sweep.py --csv $R/sweep-$2-run$run.csv --label $1 --ops $OPS > $R/sweep-$2-run$run.log 2>&1
  echo "$2 run $run rc=$? $(( $(date +%s) - start )) s"
done
cd $OUT && tar czf r.tgz r && rm -rf r
