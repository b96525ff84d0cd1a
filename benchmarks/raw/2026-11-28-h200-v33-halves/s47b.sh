# s47 call B: the experiment wheel (C = 4 in C = 2's order for 16-bit rms_norm, modes by
# FUSEDOPS_EXP_HALVES), every mode in one process, bits checked against mode 0.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s47/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
timeout 540 python .device/scripts/halves47.py $R/halves.csv 133,200,256,512,1024,2048,4096,8192,16384,65536 4096,8192,10240,12288,16384 > $R/halves.log 2>&1
echo "halves rc=$? at $(( $(date +%s) - start )) s"
cd $OUT && tar czf r.tgz r && rm -rf r
