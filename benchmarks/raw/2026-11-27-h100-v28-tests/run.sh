# v28 call 3: the GPU suite (without the sanitizers, which call 2 ran) on 7616a3b's nox
# wheel, with the tests of a2b1db8 (the working tree the device copied).
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
timeout 580 python scripts/gpu_test.py .device/head/*.whl --no-sanitizer > $OUT/r/gpu-test-head.log 2>&1; echo "rc=$?"
tail -6 $OUT/r/gpu-test-head.log
