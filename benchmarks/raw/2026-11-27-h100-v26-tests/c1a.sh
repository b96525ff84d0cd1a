set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python -c "import torch; print(torch.__version__)" | tee -a $OUT/gpu.txt
W=$(ls .device/wheel/*.whl)
timeout 590 python scripts/gpu_test.py --no-sanitizer $W > $OUT/gpu_test.log 2>&1
echo "rc=$?" | tee -a $OUT/gpu_test.log
tail -15 $OUT/gpu_test.log
