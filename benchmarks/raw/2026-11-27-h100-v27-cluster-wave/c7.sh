# v27 call 10: experiment, the 16-bit fused add at C = 4 split over a 2-block cluster at
# sm_count+1 to 2 x sm_count rows (sm_90 build of 0bb2c6d + FUSEDOPS_EXP_CLUSTER_WAVE)
# against 0bb2c6d's nox wheel: bits and kernel names in the band, then an A/B.
set -u
R=$OUT/r; mkdir -p $R
B=/tmp/base; E=/tmp/cw; mkdir -p $B $E
pip install -q --no-deps --no-index --target $B .device/new/*.whl 2>/dev/null
pip install -q --no-deps --no-index --target $E .device/cw/*.whl 2>/dev/null
PYTHONPATH=$E timeout 100 python .device/scripts/cwcheck.py > $R/cwcheck.log 2>&1; echo "check rc=$?"; tail -1 $R/cwcheck.log
A="--impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 128,133,160,200,256,264,300 --hidden 16384,18432,20480,24576,32768"
n=0
for w in base cw cw base; do
  n=$((n+1))
  if [ $w = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 80 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$w.csv --label $w $A > $R/ab-$n-$w.log 2>&1
  echo "ab $n $w rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
