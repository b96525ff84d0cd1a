# v28: ncu of the silu_and_mul forward misses of the v27 sweep that had no reading (float32
# 256 and 512 x 4096, fp16 1536 x 8192) and fp16 1536 x 2048 (read by analogy before), HEAD's
# nox wheel (silu kernels unchanged since v25); each implementation twice in a row, the
# second call is the one read.
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
for spec in "float32 256x4096,512x4096" "float16 1536x8192,1536x2048"; do
  set -- $spec
  name=silu_and_mul-$1
  timeout 200 ncu --profile-from-start off --clock-control none --cache-control none $S -o $OUT/$name python benchmarks/tools/ncu_fwd_probe.py --op silu_and_mul --dtype $1 --shapes $2 --impls fusedops,compile,liger --repeat 2 > $OUT/$name.log 2>&1
  echo "$name rc=$? $(date +%T)"
  ncu --import $OUT/$name.ncu-rep --page raw --csv > $OUT/$name.csv 2>&1
done
cd $OUT && tar czf ncu.tgz *.csv *.log gpu.txt && rm -f *.csv *.log *.ncu-rep gpu.txt
