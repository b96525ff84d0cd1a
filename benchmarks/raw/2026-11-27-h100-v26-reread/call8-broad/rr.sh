# v26 call 8: the occupancy builds re-read their row after the reduction, weight late,
# the 16-bit fused add at C = 2 held to 32 registers (FUSEDOPS_EXP_REREAD=2), against
# d10774f's nox wheel: same bits, then an A/B with the builds taking turns (base rr rr base).
set -u
B=/tmp/base; E=/tmp/rr; mkdir -p $B $E
pip install -q --no-deps --no-index --target $B .device/wheel/*.whl 2>/dev/null
pip install -q --no-deps --no-index --target $E .device/rr/*.whl 2>/dev/null
R=$OUT/r; mkdir -p $R
for w in base rr; do
  if [ $w = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$?"
done
python benchmarks/tools/same_bits.py compare $R/bits-base.json $R/bits-rr.json > $R/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -3 $R/bits-compare.txt
A="--impls fusedops --placements 1 --ops rms_norm,fused_add_rms_norm --dtypes bfloat16,float16,float32 --rows 128,1024,4096,16384,65536 --hidden 2048,4096,8192,16384"
n=0
for which in base rr rr base; do
  n=$((n+1))
  if [ $which = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 200 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$which.csv --label $which $A > $R/ab-$n-$which.log 2>&1
  echo "ab $n $which rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
