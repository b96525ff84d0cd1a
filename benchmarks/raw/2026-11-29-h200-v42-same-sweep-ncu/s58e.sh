# s58 calls E, F: ncu of every sweep miss of v42 that no profile covers yet, ours against
# all three rivals (fusedops,compile,liger,compile-static: no two calls of one kind of
# kernel side by side, so ncu_miss_table.py tells them apart), each twice in a row
# (the table reads the second). Misses of the same-tensor sweep (calls C, D) run under
# --cache-control none: the second call sees the L2 the first left, as a graph replay
# on the same tensors does. Misses of the rotating sweep (session 57's calls E, F) under
# --cache-control all: each call after an L2 flush, as a rotating call reads DRAM.
# Each job: "same|rot OP DTYPE SHAPES"; a job that would start with under 40 s of
# BUDGET left is skipped. On 66c5868's nox wheel (.device/s57). Carry .device/s57, .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R/same $R/rot
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst58e; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s57/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
S="$S --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats"
S="$S --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__warps_launched.sum"
for job in "$@"; do
  set -- $job
  mode=$1; name=$2-$3; cc=$([ $1 = same ] && echo none || echo all)
  left=$(( ${BUDGET:-540} - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "$mode $name skipped"; continue; fi
  echo "$4" > $R/$mode/$name.shapes
  timeout $(( left < 200 ? left : 200 )) ncu --profile-from-start off --clock-control none --cache-control $cc $S \
    -o $R/$mode/$name python benchmarks/tools/ncu_fwd_probe.py --op $2 --dtype $3 --shapes $4 \
    --impls fusedops,compile,liger,compile-static --repeat 2 > $R/$mode/$name.log 2>&1
  echo "$mode $name rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/$mode/$name.ncu-rep --page raw --csv > $R/$mode/$name.csv 2>&1; rm -f $R/$mode/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
