# v27: ncu of the unread fused-add misses of the v27 sweep, 283480c's nox wheel; each
# implementation twice in a row (the second call is the one read).
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy"
for spec in "float32 1536x2048 fusedops,compile" "float32 2048x2048 fusedops,compile" "bfloat16 4096x2048 fusedops,compile" "float16 512x8192 fusedops,liger" "bfloat16 512x16384 fusedops,liger"; do
  set -- $spec
  name=fused_add_rms_norm-$1-$2
  timeout 150 ncu --profile-from-start off --clock-control none --cache-control none $S -o $OUT/$name python benchmarks/tools/ncu_fwd_probe.py --op fused_add_rms_norm --dtype $1 --shapes $2 --impls $3 --repeat 2 > $OUT/$name.log 2>&1
  echo "$name rc=$? $(date +%T)"
  ncu --import $OUT/$name.ncu-rep --page raw --csv > $OUT/$name-raw.csv 2>&1
done
cd $OUT && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log *.ncu-rep
