# s60 call 4: the rest of the GPU suite on v44's wheel (with call 3's forward-plan tests, all
# of it), then a second run of call 3's rotating sweeps (v44 and v43 at hidden 16384, 16-bit
# fused add) for the noise between runs. JOBS and BUDGET as s60e.sh.
# Carry wheelhouse, .device/s59 and .whl.
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
  w=$W; [ $v = old ] && w=$(ls .device/s59/*.whl)
  pip install -q --no-deps --no-index --target $D $w .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
done
for job in ${JOBS:-bfloat16:rotating float16:rotating}; do
  dtype=${job%%:*}; pattern=${job##*:}
  for v in new old; do
    left=$(( ${BUDGET:-570} - ($(date +%s) - start) ))
    [ $left -lt 30 ] && { echo "skipped $job $v (${left} s left)"; continue; }
    n=sweep-$v-$dtype-$pattern-run2
    PYTHONPATH=/tmp/inst-$v timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv \
      --label v44-$v --pattern $pattern --ops fused_add_rms_norm --dtypes $dtype --hidden 16384 \
      --impls fusedops > $R/$n.log 2>&1
    echo "sweep $job $v rc=$? at $(( $(date +%s) - start )) s"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
