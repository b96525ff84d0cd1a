# v24 call 2: the 16-bit silu forward at 1024 x 2048 against Liger under ncu, with the L2 as the app leaves it
# (application replay, no cache control) and from DRAM (kernel replay, caches flushed before each pass)
set -u
T0=$(date +%s); left() { echo $(( 540 - ($(date +%s) - T0) )); }
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
M="--metrics smsp__inst_executed.sum,sm__warps_launched.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum"
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
nc() { s=$(date +%s); n=$1-$2-$3
  timeout $(left) ncu --profile-from-start off $4 --clock-control none $S $M -o $OUT/$n python benchmarks/tools/ncu_fwd_probe.py --op silu_and_mul --dtype $2 --shapes 1024x2048 --impls fusedops,liger --repeat 3 > $OUT/$n.log 2>&1
  echo "$n rc=$? $(( $(date +%s) - s )) s left $(left)"
  ncu --import $OUT/$n.ncu-rep --page raw --csv > $OUT/$n.csv 2>/dev/null; rm -f $OUT/$n.ncu-rep; }
nc silu bfloat16 flushed "--cache-control all"
nc silu float16 flushed "--cache-control all"
nc silu bfloat16 app "--cache-control none --replay-mode application"
nc silu float16 app "--cache-control none --replay-mode application"
cd $OUT && tar czf k7.tgz *.csv *.log && rm -f *.csv *.log
