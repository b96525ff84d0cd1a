# v27 call 1: sm_90 builds of exp-one-wave (one source, macros): base (none), c4
# (FUSEDOPS_EXP_ADD_C4), wave (FUSEDOPS_EXP_ONE_WAVE), both. Same bits against base,
# the forward-plan tests on `both`, then an A/B at 128-2048 rows (builds taking turns),
# then c4 against base at hidden 16384-32768 over the default rows.
set -u
R=$OUT/r; mkdir -p $R
for w in base c4 wave both; do
  mkdir -p /tmp/$w
  pip install -q --no-deps --no-index --target /tmp/$w .device/exp/$w/*.whl 2>/dev/null
  PYTHONPATH=/tmp/$w timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$? $(date +%T)"
done
for w in c4 wave both; do
  python benchmarks/tools/same_bits.py compare $R/bits-base.json $R/bits-$w.json > $R/bits-compare-$w.txt 2>&1; echo "compare $w rc=$?"; tail -2 $R/bits-compare-$w.txt
done
PYTHONPATH=/tmp/both FUSEDOPS_REQUIRE_GPU=1 timeout 150 python -m pytest -q -p no:cacheprovider -x tests/ops/test_cuda_forward_plans.py > $R/forward-plans-both.log 2>&1; echo "forward plans rc=$? $(date +%T)"; tail -3 $R/forward-plans-both.log
A="--impls fusedops --placements 1 --ops rms_norm,fused_add_rms_norm --dtypes bfloat16,float16,float32 --rows 128,256,512,1024,1536,2048 --hidden 2048,4096,8192,16384"
n=0
for w in base wave both c4 c4 both wave base; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 100 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$w.csv --label $w $A > $R/ab-$n-$w.log 2>&1
  echo "ab $n $w rc=$? $(date +%T)"
done
B="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --hidden 16384,24576,32768"
n=0
for w in base c4 c4 base; do
  n=$((n+1))
  PYTHONPATH=/tmp/$w timeout 60 python benchmarks/gpu_sweep.py --csv $R/long-$n-$w.csv --label $w $B > $R/long-$n-$w.log 2>&1
  echo "long $n $w rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
