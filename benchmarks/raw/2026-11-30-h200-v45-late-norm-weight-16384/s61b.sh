# s61 call 2: v45 (rms_norm's fp16 and float32 32-warp latency blocks, hidden 16384, load the
# weight late on sm_90+; wheelhouse/, `nox -s build` of the v45 source) through both
# sanitizers and the forward-plan GPU tests, then rms_norm's sweep at hidden 16384 (the only
# hidden the change reaches) in fp16 and float32, rotating and same, each swept with v45 and
# then with v44's wheel (.device/s60: the baseline in the same call). gpu_sweep.py's
# --warm-up is 3 (its default since v45). Carry wheelhouse, .device/s60 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls wheelhouse/*.whl)
timeout 240 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -E "PASS|FAIL|ok  " $R/sanitizer.log | tail -8 | cut -c1-150
timeout 200 python scripts/gpu_test.py $W --no-sanitizer -k forward_plans > $R/tests-k.log 2>&1
echo "forward_plans rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error" $R/tests-k.log | tail -4 | cut -c1-250
for v in new old; do
  D=/tmp/inst-$v; rm -rf $D; mkdir -p $D
  w=$W; [ $v = old ] && w=$(ls .device/s60/*.whl)
  pip install -q --no-deps --no-index --target $D $w .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
done
for job in ${JOBS:-float16:rotating float32:rotating float16:same float32:same}; do
  dtype=${job%%:*}; pattern=${job##*:}
  for v in new old; do
    left=$(( ${BUDGET:-570} - ($(date +%s) - start) ))
    [ $left -lt 30 ] && { echo "skipped $job $v (${left} s left)"; continue; }
    impls=fusedops; [ $v = new ] && impls=fusedops,compile-static,liger,copy
    n=sweep-$v-$dtype-$pattern
    PYTHONPATH=/tmp/inst-$v timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv \
      --label v45-$v --pattern $pattern --ops rms_norm --dtypes $dtype --hidden 16384 \
      --impls $impls > $R/$n.log 2>&1
    echo "sweep $job $v rc=$? at $(( $(date +%s) - start )) s"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
