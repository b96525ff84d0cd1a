# v24 call 3: 16-bit silu with rcp.approx alone (no Newton step; wheel o2) against HEAD's kernels (b0)
set -u
T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
for b in b0 o2; do mkdir -p /tmp/$b; pip install -q --no-deps --no-index --target /tmp/$b .device/$b/*.whl 2>/dev/null; done
pip install -q --no-deps --no-index --target /tmp/lg .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
for b in b0 o2; do PYTHONPATH=/tmp/$b python .device/scripts/approx_check.py save $OUT/out-$b.pt; done
python .device/scripts/approx_check.py compare $OUT/out-b0.pt $OUT/out-o2.pt > $OUT/approx-check.txt 2>&1; rm -f $OUT/*.pt
one() { s=$(date +%s)
  PYTHONPATH=/tmp/$1 timeout $(left) python benchmarks/gpu_sweep.py --impls fusedops --placements 1 --dtypes bfloat16,float16 --ops silu_and_mul,silu_and_mul_backward --rows 1,16,128,1024,4096 --label $1 --csv $OUT/ab-$1-run$2.csv > /dev/null 2>$OUT/ab-$1-run$2.err
  echo "$1 run$2 rc=$? $(( $(date +%s) - s )) s left $(left)"; }
one b0 1; one o2 1; one o2 2; one b0 2
s=$(date +%s); PYTHONPATH=/tmp/o2:/tmp/lg timeout $(left) python benchmarks/gpu_sweep.py --impls fusedops,compile,liger --placements 1 --dtypes bfloat16,float16 --ops silu_and_mul --rows 1,16,128,1024 --label o2 --csv $OUT/rivals-o2.csv > /dev/null 2>$OUT/rivals-o2.err
echo "rivals rc=$? $(( $(date +%s) - s )) s left $(left)"
cd $OUT && tar czf approx.tgz *.csv *.err *.txt && rm -f *.csv *.err
