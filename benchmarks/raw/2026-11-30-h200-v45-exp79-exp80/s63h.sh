# s63 call H: ncu of ours and three of exp81's plain-load Triton forms at the float32 fused add
# 1024 x 2048 (exp81_ncu.py: each called 3 times in a row on the same tensors), once with no
# cache control (as the same-tensor sweep meets them) and once flushed before each kernel.
# Carry .device/s62 (v45's wheel).
set -u
R=$OUT/r; mkdir -p $R
D=/tmp/inst63g; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s62/*.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
S="$S --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats"
S="$S --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum"
for cc in none all; do
  timeout 200 ncu --profile-from-start off --clock-control none --cache-control $cc $S -o $R/ncu-$cc \
    python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_ncu.py > $R/ncu-$cc.log 2>&1
  echo "ncu $cc rc=$?"
  ncu --import $R/ncu-$cc.ncu-rep --page raw --csv > $R/ncu-$cc.csv 2>&1; rm -f $R/ncu-$cc.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
