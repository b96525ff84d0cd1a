# v27 call 3: 283480c's nox wheel, the GPU suite but the forward-plan tests (call 4 runs those).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python -c "import torch; print(torch.__version__)" | tee -a $OUT/gpu.txt
W=$(ls .device/wheel/*.whl)
timeout 590 python scripts/gpu_test.py --no-sanitizer -k "not test_cuda_forward_plans" $W > $OUT/gpu_test-a.log 2>&1
echo "rc=$?" | tee -a $OUT/gpu_test-a.log
tail -8 $OUT/gpu_test-a.log
