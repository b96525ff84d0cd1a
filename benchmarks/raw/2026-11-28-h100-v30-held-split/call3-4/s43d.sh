# s43 call 4: 2b8a62b's nox wheel. The suite's last 78 tests, which call 3's 585 s did not
# reach (tests/faults: -k narrows, so gpu_test's every-GPU-test check fails by design;
# pytest's line is the result), both sanitizers (workload with 256 x 16384 added), then the
# fused add on the grid's split rows with the rivals, twice.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 200 python scripts/gpu_test.py .device/head/*.whl --no-sanitizer -k "test_autodiff or test_install" > $R/gpu-test-faults.log 2>&1; echo "faults rc=$? $(date +%T)"
grep -E "passed|failed" $R/gpu-test-faults.log | tail -3
timeout 220 python scripts/gpu_test.py .device/head/*.whl --sanitizer-only > $R/sanitizer.log 2>&1; echo "sanitizer rc=$? $(date +%T)"; tail -4 $R/sanitizer.log
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for run in 1 2; do
  timeout 100 python benchmarks/gpu_sweep.py --csv $R/sweep-run$run.csv --label 2b8a62b --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 256,512 --hidden 8192,16384 > $R/sweep-run$run.log 2>&1
  echo "sweep run $run rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
