# s42 call 9: ncu of the one silu forward miss of v29's sweep without a reading (float32
# 512 x 2048, 1.4% behind Liger) and a 16-row one (float32 16 x 8192, 2.2% behind
# torch.compile), 1f581b6's nox wheel, each implementation twice in a row, the second read.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
name=silu_and_mul-float32
timeout 150 ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/$name python benchmarks/tools/ncu_fwd_probe.py --op silu_and_mul --dtype float32 --shapes 512x2048,16x8192 --impls fusedops,compile,liger --repeat 2 > $R/$name.log 2>&1
echo "$name rc=$? $(date +%T)"
ncu --import $R/$name.ncu-rep --page raw --csv > $R/$name.csv 2>&1; rm -f $R/$name.ncu-rep
cd $OUT && tar czf r.tgz r && rm -rf r
