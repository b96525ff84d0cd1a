# s60 call C (prepared in s59): v43's first whole sweeps (session 59 swept hidden 8192 only,
# the one hidden v43 reaches), rotating, with every rival. JOBS (op:dtype:pattern ...) and
# BUDGET as ../../2026-11-29-h200-v42-consumer-split/s57e.sh, WHEEL as s60b.sh, LABEL the
# CSVs' label (default v43; session 60 ran it as call 6 on v44's wheel, LABEL=v44), WARMUP
# gpu_sweep.py's --warm-up (unset: gpu_sweep.py's default, 0 when session 60 ran it, 3 since v45). The norms
# in three dtypes are 6 sweeps of 2-3 minutes each: two calls (JOBS= the bf16 and fp16
# ones, then the float32 ones and silu_and_mul). Carry WHEEL (default .device/s59) and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst60c; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/s59}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for job in ${JOBS:-fused_add_rms_norm:bfloat16:rotating rms_norm:bfloat16:rotating fused_add_rms_norm:float16:rotating rms_norm:float16:rotating}; do
  op=${job%%:*}; rest=${job#*:}; dtype=${rest%%:*}; pattern=${rest##*:}
  left=$(( ${BUDGET:-560} - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped $job (${left} s left)"; continue; }
  n=sweep-$op-$dtype-$pattern
  timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv --label ${LABEL:-v43} --pattern $pattern \
    --ops $op --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy ${WARMUP:+--warm-up $WARMUP} > $R/$n.log 2>&1
  echo "sweep $job rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/$n.log) lines"
done
cd $OUT && tar czf r.tgz r && rm -rf r
