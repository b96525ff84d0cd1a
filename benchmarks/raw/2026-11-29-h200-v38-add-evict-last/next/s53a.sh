# s53 call A (prepared in s52): exp58, float32 rms_norm at hidden 16384 re-reading x in
# 32 registers (two blocks an SM), with and without the first read evict_last; then HEAD's
# nox wheel (.device/s53): the victim probe of the fused add as shipped, the forward-plan and
# fused add tests (the occupancy guard) and both sanitizers. About 7 minutes.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst58; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp58/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
PYTHONPATH=$D python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
PYTHONPATH=$D timeout 200 python benchmarks/raw/2026-11-29-h200-v38-add-evict-last/next/exp58.py $R/exp58.csv \
  --dtypes float32 --hidden 16384 --rows 256,512,1024,2048,4096,16384,65536 > $R/exp58.log 2>&1
echo "exp58 rc=$? at $(( $(date +%s) - start )) s"
W=$(ls .device/s53/*.whl)
D=/tmp/inst53; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W 2>/dev/null
PYTHONPATH=$D timeout 60 python benchmarks/raw/2026-11-29-h200-v38-add-evict-last/next/victim_shipped.py $R/victim.csv \
  --dtypes bfloat16 --rows 16384 --hidden 8192 > $R/victim.log 2>&1
echo "victim rc=$? at $(( $(date +%s) - start )) s"
timeout 150 python scripts/gpu_test.py $W --no-sanitizer -k "forward_plans or fused_add" > $R/tests-k.log 2>&1
echo "tests -k rc=$? at $(( $(date +%s) - start )) s"
timeout 200 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
cut -c1-160 $R/exp58.log; cat $R/victim.log
for f in tests-k sanitizer; do grep -E "passed|failed|PASS|FAIL|errors|hazards" $R/$f.log | tail -8; done
cd $OUT && tar czf r.tgz r && rm -rf r
