# s56 call E: v42's wheel (`nox -s build`, carried in .device/s56e): both sanitizers (the
# workload now reaches the fused add's evict_last 1024-thread builds, bf16 16384 and
# float32 8192), the forward-plan GPU tests, and v42's plans in the three call patterns
# against compile-static and Liger. Carry .device/s56e and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s56e/*.whl)
timeout 240 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -E "PASS|FAIL|ok  |FAIL " $R/sanitizer.log | tail -8 | cut -c1-150
timeout 200 python scripts/gpu_test.py $W --no-sanitizer -k forward_plans > $R/tests-k.log 2>&1
echo "forward_plans rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error" $R/tests-k.log | tail -6 | cut -c1-250
D=/tmp/inst; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for r in 448 768 2048 16384; do c="$c,fused_add_rms_norm:bfloat16:${r}x16384"; done
c="$c,fused_add_rms_norm:float32:16384x8192,rms_norm:float16:2048x16384"
left=$(( 560 - ($(date +%s) - start) ))
PYTHONPATH=$D timeout $left python benchmarks/tools/call_patterns.py $R/patterns.csv --cases ${c#,} \
  --impls compile-static,liger > $R/patterns.log 2>&1
echo "patterns rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/patterns.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
