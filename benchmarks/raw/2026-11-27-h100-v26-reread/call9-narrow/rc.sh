# v26 call 9: the re-reading 16-bit fused add (reread_build) as a sm_90 wheel of d10774f + the diff,
# against d10774f's nox wheel: same bits; A/B at 128-4096 rows (base new new base); the rivals once.
set -u
B=/tmp/base; E=/tmp/new; mkdir -p $B $E
pip install -q --no-deps --no-index --target $B .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
pip install -q --no-deps --no-index --target $E .device/rc/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
R=$OUT/r; mkdir -p $R
for w in base new; do
  if [ $w = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$?"
done
python benchmarks/tools/same_bits.py compare $R/bits-base.json $R/bits-new.json > $R/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -1 $R/bits-compare.txt
A="--impls fusedops --placements 1 --ops fused_add_rms_norm,rms_norm --dtypes bfloat16,float16 --rows 128,256,512,1024,1536,2048,3072,4096 --hidden 2048,4096,8192,16384"
n=0
for which in base new new base; do
  n=$((n+1))
  if [ $which = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 150 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$which.csv --label $which $A > $R/ab-$n-$which.log 2>&1
  echo "ab $n $which rc=$? $(date +%T)"
done
for run in 1 2; do
  PYTHONPATH=$E timeout 150 python benchmarks/gpu_sweep.py --csv $R/rivals-new-run$run.csv --label new --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 128,256,512,1024,1536,2048,3072,4096 --hidden 4096,8192 > $R/rivals-$run.log 2>&1
  echo "rivals $run rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
