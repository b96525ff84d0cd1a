# s57 call E: sweeps of 66c5868's wheel (v42's plans; .device/s57) in the rotating
# pattern, which neither the L2 between calls nor a consumer flatters: the first sweeps of
# v42 (none ran since v40). The fused add, rms_norm and silu_and_mul,
# bf16 by default, with compile-static. JOBS (op:dtype:pattern ...) and BUDGET as s54e.sh.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s57/*.whl)
D=/tmp/inst57e; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for job in ${JOBS:-fused_add_rms_norm:bfloat16:rotating rms_norm:bfloat16:rotating silu_and_mul:bfloat16:rotating}; do
  op=${job%%:*}; rest=${job#*:}; dtype=${rest%%:*}; pattern=${rest##*:}
  left=$(( ${BUDGET:-520} - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped $job (${left} s left)"; continue; }
  n=sweep-$op-$dtype-$pattern
  timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv --label v42 --pattern $pattern \
    --ops $op --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy > $R/$n.log 2>&1
  echo "sweep $job rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/$n.log) lines"
done
cd $OUT && tar czf r.tgz r && rm -rf r
