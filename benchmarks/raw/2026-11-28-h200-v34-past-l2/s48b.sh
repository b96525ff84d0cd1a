# s48 call B (prepared in s47): ncu of H200 misses of v33's sweep on 5303029's nox wheel
# (.device/head47), ours against the rivals, each implementation twice in a row (read the
# second): DRAM-bound shapes of each kind (the 16-bit fused add, float32 rms_norm, 16-bit
# rms_norm at hidden 2048) and the fused add's 1024-2048-row band.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/head47}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
[ $# -gt 0 ] || set -- "fused_add_rms_norm float16 16384x8192,1024x16384" "rms_norm float32 16384x2048,16384x4096" "rms_norm bfloat16 65536x2048" "fused_add_rms_norm bfloat16 2048x8192"
for spec in "$@"; do
  set -- $spec
  name=$1-$2
  left=$(( ${BUDGET:-570} - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "$name skipped"; continue; fi
  echo "$3" > $R/$name.shapes
  timeout $(( left < 150 ? left : 150 )) ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls fusedops,compile,liger --repeat 2 > $R/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
