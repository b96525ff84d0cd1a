# s62 call D: ncu of every miss of v45's sweeps (or v44's, where v45 changed nothing) that no
# profile of the kernel it runs covers yet: shapes that came in since v42's ncu (session 58),
# and shapes whose kernel v43-v45 changed. As ../2026-11-29-h200-v42-same-sweep-ncu/s58e.sh
# (same sections and metrics; ours and all three rivals, each twice in a row, the table
# reads the second; same-tensor misses under --cache-control none, rotating ones under
# --cache-control all), on WHEEL (v45's `nox -s build` wheel). Jobs: "same|rot OP DTYPE
# SHAPES"; a job that would start with under 40 s of BUDGET left is skipped.
# Carry WHEEL and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R/same $R/rot
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst62d; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $WHEEL/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
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
