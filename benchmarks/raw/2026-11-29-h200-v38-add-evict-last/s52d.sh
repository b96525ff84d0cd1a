# s52 call E: ncu of the misses the v38 sweep left against compile-static (a torch.compile made
# for each shape): float32 rms_norm at hidden 16384, and the fused add at 16-32 MB reads, each
# implementation twice in a row (read the second), on 4754e19's nox wheel (.device/s52).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst52d; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/s52}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
S="$S --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section SchedulerStats"
S="$S --section InstructionStats --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
S="$S,dram__sectors_read.sum,dram__sectors_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
S="$S,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum"
[ $# -gt 0 ] || set -- "rms_norm float32 16384x16384,4096x16384" "fused_add_rms_norm bfloat16 2048x4096,8192x1024"
for spec in "$@"; do
  set -- $spec
  name=$1-$2
  left=$(( ${BUDGET:-540} - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "$name skipped"; continue; fi
  echo "$3" > $R/$name.shapes
  timeout $(( left < 120 ? left : 120 )) ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls ${IMPLS:-fusedops,compile-static} --repeat 2 > $R/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
