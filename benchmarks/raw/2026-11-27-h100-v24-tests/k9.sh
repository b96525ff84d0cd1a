# v24 call 5: 9b36b1c's nox wheel: the silu tests (GPU), the new neighbours test against 938f128's wheel,
# compute-sanitizer, and the 16-bit forward A/B against 938f128
set -u
T0=$(date +%s); left() { echo $(( 430 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=$(ls .device/wheel/*.whl)
mkdir -p /tmp/new /tmp/w938
pip install -q --no-deps --no-index --target /tmp/new $W 2>/dev/null
pip install -q --no-deps --no-index --target /tmp/w938 .device/w938/*.whl 2>/dev/null
s=$(date +%s); PYTHONPATH=/tmp/new timeout 180 python -m pytest -q -p no:cacheprovider tests/ops/test_silu_and_mul.py > $OUT/silu-tests-9b36b1c.log 2>&1
echo "silu tests rc=$? $(( $(date +%s) - s )) s"; tail -2 $OUT/silu-tests-9b36b1c.log
s=$(date +%s); PYTHONPATH=/tmp/w938 timeout 90 python -m pytest -q -p no:cacheprovider tests/ops/test_silu_and_mul.py -k neighbours > $OUT/neighbours-on-938f128.log 2>&1
echo "neighbours on 938f128 rc=$? $(( $(date +%s) - s )) s"; tail -2 $OUT/neighbours-on-938f128.log
s=$(date +%s); timeout 200 python scripts/gpu_test.py --sanitizer-only $W > $OUT/san.log 2>&1
echo "san rc=$? $(( $(date +%s) - s )) s"; tail -6 $OUT/san.log
one() { s=$(date +%s)
  PYTHONPATH=/tmp/$1 timeout $(left) python benchmarks/gpu_sweep.py --impls fusedops --placements 1 --dtypes bfloat16,float16 --ops silu_and_mul --rows 1,16,128,1024,4096 --label $1 --csv $OUT/ab-$1-run$2.csv > /dev/null 2>$OUT/ab-$1-run$2.err
  echo "$1 run$2 rc=$? $(( $(date +%s) - s )) s left $(left)"; }
one w938 1; one new 1; one new 2; one w938 2
cd $OUT && tar czf k9.tgz *.csv *.err *.log gpu.txt && rm -f *.csv *.err
