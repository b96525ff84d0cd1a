# s50 call B: exp52 (16-bit rms_norm in C = 2's order at C = 4 with the weight loaded late),
# then the two slices of the GPU suite call A's halves did not reach (6/12, 12/12), then the sanitizers.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst52; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp52/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
PYTHONPATH=$D python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
PYTHONPATH=$D timeout 150 python .device/scripts/exp52.py $R/exp52.csv > $R/exp52.log 2>&1
echo "exp52 rc=$? at $(( $(date +%s) - start )) s"
for k in 6 12; do
  timeout 110 python scripts/gpu_test.py .device/s50/*.whl --no-sanitizer --part $k/12 > $R/part$k-of-12.log 2>&1
  echo "part $k/12 rc=$? at $(( $(date +%s) - start )) s"
done
timeout 200 python scripts/gpu_test.py .device/s50/*.whl --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
for f in part6-of-12 part12-of-12 sanitizer; do grep -E "passed|failed|PASS|FAIL|holds|errors|hazards" $R/$f.log | tail -4; done
cut -c1-150 $R/exp52.log
cd $OUT && tar czf r.tgz r && rm -rf r
