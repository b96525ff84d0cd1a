# s51 call A (prepared in s50): ncu of the two kinds of miss v36 left unexplained, ours against
# torch.compile and Liger (ncu_miss_table.py reads the three), each implementation twice in a row (read the second), on HEAD's nox wheel
# (.device/s51): the DRAM side of 16-bit and float32 rms_norm past the L2 (two hold-the-row
# variants that raised occupancy lost: v35's re-read, v36's late weight), and the silu forward
# at 1-16 rows (16-42 ns behind torch.compile; 8- or 16-byte vectors do not close it, v36's exp51).
# About 4 x 60-100 s; BUDGET caps the call.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst51a; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/s51}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
S="$S --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section SchedulerStats"
S="$S --section InstructionStats --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
S="$S,dram__sectors_read.sum,dram__sectors_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
S="$S,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum"
[ $# -gt 0 ] || set -- "rms_norm bfloat16 65536x8192,16384x8192" "rms_norm float32 65536x4096,16384x2048" "silu_and_mul bfloat16 1x4096,16x4096" "silu_and_mul float32 1x2048,1x8192"
for spec in "$@"; do
  set -- $spec
  name=$1-$2
  left=$(( ${BUDGET:-540} - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "$name skipped"; continue; fi
  echo "$3" > $R/$name.shapes
  timeout $(( left < 150 ? left : 150 )) ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls fusedops,compile,liger --repeat 2 > $R/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
