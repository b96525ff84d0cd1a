# s54 call A: exp60 (L1 eviction priorities on the float32 re-reading build, hidden
# 16384), the forward-plan and fused add GPU tests on HEAD's nox wheel (.device/s54),
# then the fused add's graph neighbour probe with compile-static, cut at the budget.
# Carry .device/exp60, .device/s54 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst60; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp60/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
PYTHONPATH=$D python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
PYTHONPATH=$D timeout 300 python benchmarks/raw/2026-11-29-h200-v39-reread-evict-last/next/exp60.py $R/exp60.csv \
  --dtypes float32 --hidden 16384 --rows 256,512,1024,2048,4096,16384,65536 > $R/exp60.log 2>&1
echo "exp60 rc=$? at $(( $(date +%s) - start )) s"
W=$(ls .device/s54/*.whl)
timeout 170 python scripts/gpu_test.py $W --no-sanitizer -k "forward_plans or fused_add" > $R/tests-k.log 2>&1
echo "tests -k rc=$? at $(( $(date +%s) - start )) s"
D=/tmp/inst54; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
left=$(( 575 - ($(date +%s) - start) ))
if [ $left -gt 40 ]; then
  PYTHONPATH=$D timeout $left python benchmarks/tools/graph_neighbor_probe.py --csv $R/neighbour.csv \
    --cases fused_add_rms_norm:bfloat16:4096x2048,fused_add_rms_norm:bfloat16:1024x8192,fused_add_rms_norm:float32:1024x4096,fused_add_rms_norm:float32:512x8192 \
    --impls fusedops,compile-static > $R/neighbour.log 2>&1
  echo "neighbour rc=$? at $(( $(date +%s) - start )) s"
fi
cut -c1-200 $R/exp60.log | tail -60
grep -E "passed|failed|PASS|FAIL" $R/tests-k.log | tail -4
tail -20 $R/neighbour.log 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
