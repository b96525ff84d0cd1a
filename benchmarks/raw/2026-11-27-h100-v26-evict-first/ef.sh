# v26 call 3: L2 evict_first on the single-pass forward's x/residual loads (FUSEDOPS_EXP_EF),
# A/B against d10774f's nox wheel, builds taking turns (base, ef, ef, base); then the graph's
# DRAM bytes for the fused add at 1024 x 8192 with the experiment.
set -u
B=/tmp/base; E=/tmp/ef; mkdir -p $B $E
pip install -q --no-deps --no-index --target $B .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
pip install -q --no-deps --no-index --target $E .device/ef/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
R=$OUT/r; mkdir -p $R
A="--impls fusedops --placements 1 --ops rms_norm,fused_add_rms_norm --dtypes bfloat16,float16,float32 --rows 128,1024,4096,16384,65536 --hidden 2048,4096,8192,16384"
n=0
for which in base ef ef base; do
  n=$((n+1))
  if [ $which = base ]; then P=$B; else P=$E; fi
  PYTHONPATH=$P timeout 280 python benchmarks/gpu_sweep.py --csv $R/ab-$n-$which.csv --label $which $A > $R/ab-$n-$which.log 2>&1
  echo "ab $n $which rc=$? $(date +%T)"
done
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
for which in base ef; do
  if [ $which = base ]; then P=$B; else P=$E; fi
  for dt in float16 bfloat16; do
    PYTHONPATH=$P timeout 100 ncu --profile-from-start off --graph-profiling graph --cache-control none --clock-control none --metrics $M --csv --page raw python benchmarks/tools/graph_dram_probe.py --op fused_add_rms_norm --dtype $dt --shape 1024x8192 --impls fusedops --placements 3 > $R/dram-$which-$dt.csv 2>&1
    echo "dram $which $dt rc=$?"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
