# s42 call 8: ncu of the four norm shapes that v29's sweep newly has behind a rival by more
# than 1% (fused add bf16 256 x 4096 and 2048 x 4096, fp16 256 x 8192; rms_norm fp16
# 1 x 2048), 1f581b6's nox wheel, each implementation twice in a row, the second read.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
for spec in "fused_add_rms_norm bfloat16 256x4096,2048x4096" "fused_add_rms_norm float16 256x8192" "rms_norm float16 1x2048"; do
  set -- $spec
  name=$1-$2
  timeout 150 ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls fusedops,compile,liger --repeat 2 > $R/$name.log 2>&1
  echo "$name rc=$? $(date +%T)"
  ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
