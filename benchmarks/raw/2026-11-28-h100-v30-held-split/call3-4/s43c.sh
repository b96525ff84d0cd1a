# s43 call 3: the GPU suite (without the sanitizers) on 2b8a62b's nox wheel (the held
# split), with the tests of the working tree the device copied.
mkdir -p $OUT/r && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
timeout 585 python scripts/gpu_test.py .device/head/*.whl --no-sanitizer > $OUT/r/gpu-test.log 2>&1; echo "rc=$?"
tail -8 $OUT/r/gpu-test.log
cd $OUT && tar czf r.tgz r && rm -rf r
