# s42 call 6: the norm shapes that v29's sweep (call 4) had 1.5-2.4% slower than v27's,
# on one machine: 283480c's nox wheel (v27's sweep wheel, base) against 1f581b6's (new),
# taking turns. Their few-row and one-wave kernels are the same code. Then ncu of the
# fused add at 256 x 16384 (bf16 level with Liger in call 4, fp16 4.7% behind) with Liger
# and torch.compile, 1f581b6's wheel.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python benchmarks/tools/ab_runs.py --base .device/v27/*.whl --new .device/head/*.whl --out $R/v27ab --timeout 120 -- \
  --impls fusedops --ops rms_norm,fused_add_rms_norm --rows 16,256,512,4096 --hidden 2048,4096,8192 > $R/v27ab.log 2>&1
echo "ab rc=$? $(date +%T)"; tail -6 $R/v27ab.log
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
for dt in bfloat16 float16; do
  PYTHONPATH=$D timeout 120 ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/ncu-add-$dt python benchmarks/tools/ncu_fwd_probe.py --op fused_add_rms_norm --dtype $dt --shapes 256x16384 --impls fusedops,liger,compile --repeat 2 > $R/ncu-add-$dt.log 2>&1
  echo "ncu $dt rc=$? $(date +%T)"
  ncu --import $R/ncu-add-$dt.ncu-rep --page raw --csv > $R/ncu-add-$dt.csv 2>&1; rm -f $R/ncu-add-$dt.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
