# s59 call G: the sweep call F skipped (float32 same, v42's wheel) and the rotating sweeps of
# call E again, as a second run of each (s59e.sh's loop, no tests). Carry wheelhouse,
# .device/s57 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls wheelhouse/*.whl)
for v in new old; do
  D=/tmp/inst-$v; rm -rf $D; mkdir -p $D
  w=$W; [ $v = old ] && w=$(ls .device/s57/*.whl)
  pip install -q --no-deps --no-index --target $D $w .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
done
for job in ${JOBS:-float32:same:old bfloat16:rotating float16:rotating float32:rotating}; do
  IFS=: read dtype pattern only <<< "$job"
  for v in ${only:-new old}; do
    left=$(( ${BUDGET:-230} - ($(date +%s) - start) ))
    [ $left -lt 20 ] && { echo "skipped $job $v (${left} s left)"; continue; }
    n=sweep-$v-$dtype-$pattern-run2
    PYTHONPATH=/tmp/inst-$v timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv \
      --label v43-$v --pattern $pattern --ops fused_add_rms_norm --dtypes $dtype --hidden 8192 \
      --impls fusedops > $R/$n.log 2>&1
    echo "sweep $job $v rc=$? at $(( $(date +%s) - start )) s"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
