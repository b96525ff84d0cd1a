# s59 call F: the rest of the GPU suite on v43's wheel (with call E's forward-plan tests, all
# of it), then s59e.sh's sweeps that call E skipped (JOBS, in what time is left).
# Carry wheelhouse, .device/s57 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls wheelhouse/*.whl)
timeout 500 python scripts/gpu_test.py $W --no-sanitizer -k "not forward_plans" > $R/tests-rest.log 2>&1
echo "rest rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error|FAIL|ok  " $R/tests-rest.log | tail -8 | cut -c1-220
for v in new old; do
  D=/tmp/inst-$v; rm -rf $D; mkdir -p $D
  w=$W; [ $v = old ] && w=$(ls .device/s57/*.whl)
  pip install -q --no-deps --no-index --target $D $w .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
done
for job in ${JOBS:-float16:same float32:same}; do
  dtype=${job%%:*}; pattern=${job##*:}
  for v in new old; do
    left=$(( ${BUDGET:-570} - ($(date +%s) - start) ))
    [ $left -lt 30 ] && { echo "skipped $job $v (${left} s left)"; continue; }
    impls=fusedops; [ $v = new ] && impls=fusedops,compile-static,liger,copy
    n=sweep-$v-$dtype-$pattern
    PYTHONPATH=/tmp/inst-$v timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv \
      --label v43-$v --pattern $pattern --ops fused_add_rms_norm --dtypes $dtype --hidden 8192 \
      --impls $impls > $R/$n.log 2>&1
    echo "sweep $job $v rc=$? at $(( $(date +%s) - start )) s"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
