# v24 (prepared in v23): the silu backward in output order (FUSEDOPS_EXP_BWD_ORDER, wheel o1) against HEAD's kernels (b0, 9363586 sm_90)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for b in b0 o1; do mkdir -p /tmp/$b; pip install -q --no-deps --no-index --target /tmp/$b .device/$b/*.whl 2>/dev/null; done
PYTHONPATH=/tmp/b0 timeout 120 python benchmarks/tools/same_bits.py save $OUT/bits-b0.json > $OUT/bits.log 2>&1
FUSEDOPS_EXP_BWD_ORDER=1 PYTHONPATH=/tmp/o1 timeout 120 python benchmarks/tools/same_bits.py save $OUT/bits-o1.json >> $OUT/bits.log 2>&1
python benchmarks/tools/same_bits.py compare $OUT/bits-b0.json $OUT/bits-o1.json 2>&1 | tail -2 | tee $OUT/compare.txt
one() { s=$(date +%s)
  if [ $1 = o1 ]; then export FUSEDOPS_EXP_BWD_ORDER=1; else unset FUSEDOPS_EXP_BWD_ORDER; fi
  PYTHONPATH=/tmp/$1 timeout 90 python benchmarks/gpu_sweep.py --impls fusedops --placements 1 --ops silu_and_mul_backward --rows 1024,4096,16384,65536 --label $1 --csv $OUT/ab-$1-run$2.csv > /dev/null 2>$OUT/ab-$1-run$2.err
  echo "$1 run$2 rc=$? $(( $(date +%s) - s )) s"; }
one b0 1; one o1 1; one o1 2; one b0 2
unset FUSEDOPS_EXP_BWD_ORDER
cd $OUT && tar czf order.tgz *.csv *.err *.log *.txt && rm -f *.csv *.err *.log *.json
