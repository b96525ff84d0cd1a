# s58 call B (prepared in s57): ncu of the rotating sweep's largest misses (s57 calls E, F),
# ours against compile-static and Liger, each implementation twice in a row (ncu_miss_table.py
# reads the second). --cache-control all flushes the L2 before every profiled kernel, so each
# reads its inputs from DRAM, as a rotating call does (what it lacks is the last call's dirty
# output in the L2). On 66c5868's nox wheel (.device/s57; WHEEL= another). Then
#   python benchmarks/tools/ncu_miss_table.py table <the rotating sweep CSVs> --ncu r \
#       --impls fusedops,compile-static,liger
# About 5 x 100 s; BUDGET caps the call. Carry .device/s57 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst58b; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/s57}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
S="$S --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats"
S="$S --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum"
[ $# -gt 0 ] || set -- "fused_add_rms_norm float16 512x8192,256x8192,256x16384,128x8192" \
  "fused_add_rms_norm bfloat16 256x8192,512x4096,512x8192,256x16384" \
  "fused_add_rms_norm float32 1024x2048,512x4096,256x4096" \
  "rms_norm float32 1024x16384,256x4096,512x8192" "rms_norm bfloat16 512x4096"
for spec in "$@"; do
  set -- $spec
  name=$1-$2
  left=$(( ${BUDGET:-540} - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "$name skipped"; continue; fi
  echo "$3" > $R/$name.shapes
  timeout $(( left < 150 ? left : 150 )) ncu --profile-from-start off --clock-control none --cache-control all $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls fusedops,compile-static,liger --repeat 2 > $R/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
