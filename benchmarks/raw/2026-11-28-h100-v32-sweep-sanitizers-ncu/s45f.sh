# s45 call F: is the split's hold (2b8a62b, v30) still faster where v32's sweep had bf16
# 512 x 8192 2.6% slower than v29's unheld? bc253a2 (before the hold; pip wheel, sm_90)
# against HEAD's kernels (a1a8967's nox wheel), taking turns, fusedops alone with the
# sweep's default placements, the held and neighbouring shapes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python benchmarks/tools/ab_runs.py --base .device/bc253a2/*.whl --new .device/head/*.whl --out $OUT/r/ab --timeout 120 -- --impls fusedops --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 256,450,480,512 --hidden 8192,16384 > $OUT/r/ab.log 2>&1; echo "ab rc=$?"
tail -30 $OUT/r/ab.log
cd $OUT && tar czf r.tgz r && rm -rf r
