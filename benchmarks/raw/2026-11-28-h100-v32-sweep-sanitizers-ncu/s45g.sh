# s45 call G: the held-split test's new blocks-an-SM check, and the sanitizers on the
# workload whose past-the-loop parts are now keyed by dtype (ONE_DTYPE_PARTS), HEAD's
# kernels (a1a8967's nox wheel).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 90 python scripts/gpu_test.py .device/head/*.whl --no-sanitizer -k held_to_two_even_waves > $R/held.log 2>&1; echo "held rc=$? at $(( $(date +%s) - start )) s"
tail -4 $R/held.log
timeout 230 python scripts/gpu_test.py .device/head/*.whl --sanitizer-only > $R/sanitizer.log 2>&1; echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -v "^=========     " $R/sanitizer.log | grep "peak\|smoke\|  ok\|FAIL" | tail -14
cd $OUT && tar czf r.tgz r && rm -rf r
