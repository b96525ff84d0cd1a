# s56 call B (prepared in s55): sweeps of v41's wheel (.device/s55f) in the consumer
# pattern (gpu_sweep.py --pattern consumer, not yet run on a GPU), then the same in the
# sweep's own pattern for comparison if the budget allows: the fused add and rms_norm,
# bf16 by default, with compile-static. JOBS (op:dtype:pattern ...) and BUDGET as s54e.sh.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s55f/*.whl)
D=/tmp/inst56b; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for job in ${JOBS:-fused_add_rms_norm:bfloat16:consumer rms_norm:bfloat16:consumer fused_add_rms_norm:bfloat16:same}; do
  op=${job%%:*}; rest=${job#*:}; dtype=${rest%%:*}; pattern=${rest##*:}
  left=$(( ${BUDGET:-575} - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped $job (${left} s left)"; continue; }
  n=sweep-$op-$dtype-$pattern
  timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv --label v41 --pattern $pattern \
    --ops $op --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy > $R/$n.log 2>&1
  echo "sweep $job rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/$n.log) lines"
done
cd $OUT && tar czf r.tgz r && rm -rf r
