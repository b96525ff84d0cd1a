# v27 call 2: the one-wave latency build (branch one-wave, sm_90 build `ow`) against
# exp-one-wave's base sm_90 build (HEAD's kernels): same bits, the forward-plan tests
# (with the new one-wave test), which kernel each shape takes, an A/B over 128-2048 rows.
set -u
R=$OUT/r; mkdir -p $R
for w in base ow; do
  mkdir -p /tmp/$w
  pip install -q --no-deps --no-index --target /tmp/$w .device/exp/$w/*.whl 2>/dev/null
  PYTHONPATH=/tmp/$w timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$? $(date +%T)"
done
python benchmarks/tools/same_bits.py compare $R/bits-base.json $R/bits-ow.json > $R/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -1 $R/bits-compare.txt
PYTHONPATH=/tmp/ow FUSEDOPS_REQUIRE_GPU=1 timeout 240 python -m pytest -q -p no:cacheprovider tests/ops/test_cuda_forward_plans.py > $R/forward-plans-ow.log 2>&1; echo "forward plans rc=$? $(date +%T)"; tail -3 $R/forward-plans-ow.log
ROWS=128,200,256,300,400,512,640,768,1024,1536,2048
for w in base ow; do
  PYTHONPATH=/tmp/$w timeout 120 python .device/scripts/plans.py $R/plans-$w.csv $ROWS > $R/plans-$w.log 2>&1; echo "plans $w rc=$? $(date +%T)"
done
A="--impls fusedops --placements 1 --ops rms_norm,fused_add_rms_norm --dtypes bfloat16,float16,float32 --rows $ROWS --hidden 2048,4096,8192,16384"
n=0
for w in base ow ow base base ow; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 100 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$w.csv --label $w $A > $R/ab-$n-$w.log 2>&1
  echo "ab $n $w rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
