# v26 call 2: the graph's steady state for the fused-add misses at 1024 rows.
# graph_dram_probe: DRAM bytes per replay (ncu --graph-profiling graph); then the
# sweep's timing of the same shapes, twice, for the gap on this machine.
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum
for spec in "bfloat16 1024x8192" "float16 1024x8192" "float16 1024x4096" "bfloat16 1024x4096"; do
  set -- $spec
  name=dram-$1-$2
  timeout 150 ncu --profile-from-start off --graph-profiling graph --cache-control none --clock-control none --metrics $M --csv --page raw python benchmarks/tools/graph_dram_probe.py --op fused_add_rms_norm --dtype $1 --shape $2 --impls fusedops,compile,liger --placements 3 > $OUT/$name.csv 2> $OUT/$name.err
  echo "$name rc=$?"
done
for run in 1 2; do
  timeout 200 python benchmarks/gpu_sweep.py --csv $OUT/sweep-run$run.csv --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 1024 --hidden 4096,8192 --label d10774f > $OUT/sweep-run$run.log 2>&1
  echo "sweep $run rc=$?"
done
