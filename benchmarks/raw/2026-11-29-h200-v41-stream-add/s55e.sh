# s55 call E: v41's wheel (`nox -s build`, carried in .device/s55f): both sanitizers (the
# workload's 16-bit fused add batches of 16/15 of the L2 reach the kStreamAdd builds), the
# forward-plan GPU tests, and v41's plan in the three call patterns against compile-static
# and Liger (benchmarks/tools/call_patterns.py). About 6 minutes. Carry .device/s55f, .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s55f/*.whl)
timeout 230 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -E "PASS|FAIL|ok  |FAIL " $R/sanitizer.log | tail -8 | cut -c1-150
timeout 180 python scripts/gpu_test.py $W --no-sanitizer -k forward_plans > $R/tests-k.log 2>&1
echo "forward_plans rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error" $R/tests-k.log | tail -4 | cut -c1-200
D=/tmp/inst; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for dt in bfloat16 float16; do for r in 496 512 576; do c="$c,fused_add_rms_norm:$dt:${r}x16384"; done; done
c="$c,fused_add_rms_norm:bfloat16:1024x8192,rms_norm:bfloat16:4096x4096"
PYTHONPATH=$D timeout 150 python benchmarks/tools/call_patterns.py $R/patterns.csv --cases ${c#,} \
  --impls compile-static,liger > $R/patterns.log 2>&1
echo "patterns rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/patterns.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
