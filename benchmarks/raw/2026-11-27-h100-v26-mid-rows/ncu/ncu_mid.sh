# v26 call 13: ncu of the largest mid-row fused-add misses (bf16 256 x 16384 against Liger,
# fp16 1536 x 4096 against torch.compile), d10774f's nox wheel.
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
for spec in "bfloat16 256x16384 fusedops,liger" "float16 1536x4096 fusedops,compile"; do
  set -- $spec
  name=fused_add_rms_norm-$1-$2
  timeout 150 ncu --profile-from-start off --clock-control none --cache-control none $S -o $OUT/$name python benchmarks/tools/ncu_fwd_probe.py --op fused_add_rms_norm --dtype $1 --shapes $2 --impls $3 --repeat 2 > $OUT/$name.log 2>&1
  echo "$name rc=$?"
  ncu --import $OUT/$name.ncu-rep --page raw --csv > $OUT/$name-raw.csv 2>&1
done
cd $OUT && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log *.ncu-rep
