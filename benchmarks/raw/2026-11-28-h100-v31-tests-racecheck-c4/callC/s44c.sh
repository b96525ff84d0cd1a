# s44 call C: A/B of 4 vectors a thread for 16-bit rows of 1025-2048 vectors (both norms,
# every batch) against HEAD, sm_90 builds; then the new build's same-bits check.
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
python benchmarks/tools/ab_runs.py --base .device/b44/*.whl --new .device/e44/*.whl --out $OUT/r/ab --timeout 110 -- --impls fusedops --placements 1 --ops rms_norm,fused_add_rms_norm --dtypes bfloat16,float16 --rows 1,16,128,256,512,1024,4096,16384 --hidden 12288,16384 > $OUT/r/ab.log 2>&1; echo "ab rc=$?"
tail -45 $OUT/r/ab.log
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D .device/e44/*.whl 2>/dev/null
PYTHONPATH=$D timeout 60 python .device/scripts/bits44.py 2>&1 | tail -8
