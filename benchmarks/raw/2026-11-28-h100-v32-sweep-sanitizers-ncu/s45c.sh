# s45 calls C (an H200, not named) and D (H100, named): ncu of the sweep shapes that v32's sweep newly has behind a rival by more than
# 1% without an earlier reading (fused add float32 1024 x 4096, float16 256 x 4096 and
# 2048 x 4096; rms_norm float32 128 x 8192; silu_and_mul float16 1536 x 8192), HEAD's
# kernels (a1a8967's nox wheel), each implementation twice in a row, the second read.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
# usage: s45c.sh [SPEC ...], SPEC "OP DTYPE SHAPES" (default: all four; call E reran the last
# two, whose files call D's reply left out, and the files now come back as one archive)
[ $# -gt 0 ] || set -- "fused_add_rms_norm float32 1024x4096" "fused_add_rms_norm float16 256x4096,2048x4096" "rms_norm float32 128x8192" "silu_and_mul float16 1536x8192"
for spec in "$@"; do
  set -- $spec
  name=$1-$2
  left=$(( 570 - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "$name skipped"; continue; fi
  echo "$3" > $R/$name.shapes
  timeout $(( left < 150 ? left : 150 )) ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls fusedops,compile,liger --repeat 2 > $R/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
