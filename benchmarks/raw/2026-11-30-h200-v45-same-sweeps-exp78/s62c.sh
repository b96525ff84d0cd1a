# s62 call C (at most about 540 s). Carry .device/exp78, WHEEL (v45's `nox -s build` wheel)
# and .whl.
# 1. exp78: session 61's s62a.sh as prepared (BUDGET 300).
# 2. The bf16 fused add at 16 MiB a tensor on the same tensors (512 x 16384, 1024 x 8192,
#    2048 x 4096, 4096 x 2048): behind compile-static by 2.4-6.3% in session 61's and this
#    session's sweeps, at 0.4-0.9% in v42's but 1024 x 8192. The call reads 32 MiB and writes
#    32 MiB, about an H200's L2. ncu of ours and compile-static, three calls each in a row,
#    no cache control: the third call of each finds the L2 its own second call left, as the
#    same-tensor sweep does. Read: DRAM bytes read and written, L2 hit rate, time.
set -u
start=$(date +%s)
BUDGET=300 bash benchmarks/raw/2026-11-30-h200-v45-late-norm-weight-16384/next/s62a.sh
R=$OUT/n; mkdir -p $R
D=/tmp/inst62c; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $WHEEL/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
export PYTHONPATH=$D
left=$(( 560 - 15 - ($(date +%s) - start) ))
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct
if [ $left -ge 60 ]; then
  timeout $left ncu --profile-from-start off --clock-control none --cache-control none \
    --section SpeedOfLight --section LaunchStats --section WarpStateStats --metrics $M \
    -o $R/ncu-add-bf16-same python benchmarks/tools/ncu_fwd_probe.py --op fused_add_rms_norm \
    --dtype bfloat16 --shapes 512x16384,1024x8192,2048x4096,4096x2048 \
    --impls fusedops,compile-static --repeat 3 > $R/ncu.log 2>&1
  echo "ncu rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/ncu-add-bf16-same.ncu-rep --page raw --csv > $R/ncu-add-bf16-same.csv 2>&1
  rm -f $R/ncu-add-bf16-same.ncu-rep
else
  echo "ncu skipped ($left s left)"
fi
cd $OUT && tar czf n.tgz n && rm -rf n
