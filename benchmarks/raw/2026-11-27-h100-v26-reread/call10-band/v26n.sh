# v26 call 10: ee673bf's nox wheel (the re-reading fused-add build) against d10774f's:
# same bits, the forward-plan tests, an A/B over 128-4096 rows (base new new base), the rivals once.
set -u
B=/tmp/base; E=/tmp/new; mkdir -p $B $E
pip install -q --no-deps --no-index --target $B .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
pip install -q --no-deps --no-index --target $E .device/new/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
R=$OUT/r; mkdir -p $R
for w in base new; do
  if [ $w = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$?"
done
python benchmarks/tools/same_bits.py compare $R/bits-base.json $R/bits-new.json > $R/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -1 $R/bits-compare.txt
PYTHONPATH=$E FUSEDOPS_REQUIRE_GPU=1 timeout 200 python -m pytest -q -p no:cacheprovider tests/ops/test_cuda_forward_plans.py > $R/forward-plans.log 2>&1; echo "forward plans rc=$?"; tail -2 $R/forward-plans.log
A="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 128,256,400,512,768,925,1024,1189,1536,2048,4096 --hidden 2048,4096,8192,16384"
n=0
for which in base new new base; do
  n=$((n+1))
  if [ $which = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 120 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$which.csv --label $which $A > $R/ab-$n-$which.log 2>&1
  echo "ab $n $which rc=$? $(date +%T)"
done
for run in 1 2; do
  PYTHONPATH=$E timeout 120 python benchmarks/gpu_sweep.py --csv $R/rivals-new-run$run.csv --label ee673bf --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 400,925,1024 --hidden 4096,8192 > $R/rivals-$run.log 2>&1
  echo "rivals $run rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
