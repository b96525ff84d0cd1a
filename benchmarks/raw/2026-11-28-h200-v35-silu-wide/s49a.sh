# s49 call A (prepared in s48): exp49.py on the experiment wheel (rms_norm past the L2
# re-reading x), every dtype and setting in one process; then ncu of base and rr2 at two
# of v34's DRAM-bound misses.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst49; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp49/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__)"
cp benchmarks/raw/2026-11-28-h200-v34-past-l2/next/exp49.py .device/scripts/exp49.py
timeout 400 python .device/scripts/exp49.py $R/exp49.csv --hidden 2048,4096,8192,12288,16384 > $R/exp49.log 2>&1
echo "exp49 rc=$? at $(( $(date +%s) - start )) s"
cat $R/exp49.log
S="--section SpeedOfLight --section Occupancy --section LaunchStats --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct"
for mode in 0 2; do
  left=$(( 570 - ($(date +%s) - start) ))
  [ $left -lt 40 ] && { echo "ncu mode $mode skipped"; continue; }
  FUSEDOPS_EXP_REREAD=$mode timeout $(( left < 80 ? left : 80 )) ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/ncu-rr$mode python benchmarks/tools/ncu_fwd_probe.py --op rms_norm --dtype float32 --shapes 65536x4096 --impls fusedops --repeat 2 > $R/ncu-rr$mode.log 2>&1
  ncu --import $R/ncu-rr$mode.ncu-rep --page raw --csv > $R/ncu-rr$mode.csv 2>&1; rm -f $R/ncu-rr$mode.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
