# s52 calls B and C: 4754e19's nox wheel (.device/s52): the forward-plan and fused add tests,
# both sanitizers, then gpu_sweep.py's norm grid one op and dtype at a time with the
# rivals and a torch.compile made for each shape (compile-static), cut at the budget.
# JOBS: "op:dtype ..." in order; BUDGET: seconds for the whole call; LABEL: the sweep label (v38).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls ${WHEEL:-.device/s52}/*.whl)
if [ "${TESTS:-1}" = 1 ]; then
  timeout 170 python scripts/gpu_test.py $W --no-sanitizer -k "forward_plans or fused_add" > $R/tests-k.log 2>&1
  echo "tests -k rc=$? at $(( $(date +%s) - start )) s"
  timeout 220 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
  echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
fi
D=/tmp/inst52; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
for job in $JOBS; do
  op=${job%%:*}; dtype=${job##*:}
  left=$(( ${BUDGET:-570} - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped $job (${left} s left)"; continue; }
  PYTHONPATH=$D timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-$op-$dtype.csv --label ${LABEL:-v38} \
    --ops $op --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy > $R/sweep-$op-$dtype.log 2>&1
  echo "sweep $job rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-$op-$dtype.log) lines"
done
for f in tests-k sanitizer; do [ -f $R/$f.log ] && grep -E "passed|failed|PASS|FAIL|errors|hazards" $R/$f.log | tail -8; done
cd $OUT && tar czf r.tgz r && rm -rf r
