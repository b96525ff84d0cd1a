# s54 call E: the v40 nox wheel with streamed inputs (.device/s54e): the forward-plan GPU
# tests, then the fused add sweeps (bf16, float32) and rms_norm bf16 with compile-static,
# cut at the budget. TESTS=0 leaves the tests out; JOBS, BUDGET as s52c.sh.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s54e/*.whl)
if [ "${TESTS:-1}" = 1 ]; then
  timeout 170 python scripts/gpu_test.py $W --no-sanitizer -k "forward_plans" > $R/tests-k.log 2>&1
  echo "tests -k rc=$? at $(( $(date +%s) - start )) s"
  grep -E "passed|failed" $R/tests-k.log | tail -2
  grep -E "^FAILED|^E  " $R/tests-k.log | head -20
fi
D=/tmp/inst54e; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for job in ${JOBS:-fused_add_rms_norm:bfloat16 fused_add_rms_norm:float32 rms_norm:bfloat16}; do
  op=${job%%:*}; dtype=${job##*:}
  left=$(( ${BUDGET:-575} - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped $job (${left} s left)"; continue; }
  timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-$op-$dtype.csv --label v40 \
    --ops $op --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy > $R/sweep-$op-$dtype.log 2>&1
  echo "sweep $job rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-$op-$dtype.log) lines"
done
cd $OUT && tar czf r.tgz r && rm -rf r
