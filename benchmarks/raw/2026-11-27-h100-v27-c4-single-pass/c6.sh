# v27 call 8: 0bb2c6d's nox wheel against 283480c's: same bits, an A/B of the 16-bit fused
# add at hidden 16384-32768 (base new new base), then memcheck and racecheck of 0bb2c6d.
set -u
R=$OUT/r; mkdir -p $R
B=/tmp/base; E=/tmp/new; mkdir -p $B $E
pip install -q --no-deps --no-index --target $B .device/wheel/*.whl 2>/dev/null
pip install -q --no-deps --no-index --target $E .device/new/*.whl 2>/dev/null
for w in base new; do
  if [ $w = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 120 python benchmarks/tools/same_bits.py save $R/bits-$w.json > $R/bits-$w.log 2>&1; echo "bits $w rc=$?"
done
python benchmarks/tools/same_bits.py compare $R/bits-base.json $R/bits-new.json > $R/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -1 $R/bits-compare.txt
A="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --hidden 16384,18432,20480,24576,32768"
n=0
for w in base new new base; do
  n=$((n+1))
  if [ $w = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 80 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$w.csv --label $w $A > $R/ab-$n-$w.log 2>&1
  echo "ab $n $w rc=$? $(date +%T)"
done
timeout 300 python scripts/gpu_test.py --sanitizer-only $(ls .device/new/*.whl) > $R/san.log 2>&1
echo "san rc=$?"; tail -4 $R/san.log
cd $OUT && tar czf r.tgz r && rm -rf r
