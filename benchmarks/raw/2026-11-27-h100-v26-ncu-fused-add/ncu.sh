# v26 call 1: ncu of v25's two new fused-add misses (bf16 1024x8192 vs torch.compile, fp16 1024x4096 vs Liger)
# on d10774f's nox wheel (.device/wheel), with the fp16 1024x8192 row (v20's occupancy reading) beside them.
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --section InstructionStats --section MemoryWorkloadAnalysis"
for spec in "fused_add_rms_norm bfloat16 1024x8192 fusedops,compile" "fused_add_rms_norm float16 1024x8192 fusedops,compile" "fused_add_rms_norm float16 1024x4096 fusedops,liger"; do
  set -- $spec
  name=$1-$2-$3
  timeout 170 ncu --profile-from-start off --clock-control none --cache-control none $S -o $OUT/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls $4 --repeat 2 > $OUT/$name.log 2>&1
  echo "$name rc=$?"
  ncu --import $OUT/$name.ncu-rep --page raw --csv > $OUT/$name-raw.csv 2>&1
  ncu --import $OUT/$name.ncu-rep --page details > $OUT/$name-details.txt 2>&1
done
cd $OUT && tar czf ncu.tgz *.txt *.csv *.log && rm -f *.txt *.csv *.log *.ncu-rep
