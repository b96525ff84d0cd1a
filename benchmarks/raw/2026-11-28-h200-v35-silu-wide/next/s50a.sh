# s50 call A (prepared in s49): exp51.py on the experiment wheel (.device/exp51: 44a5d15 + exp-silu2.diff):
# silu forward launches of up to 131072 vectors in 8- or 16-byte vectors, and the float32
# backward past 2^20 vectors in 16-byte vectors.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst51; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp51/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 75 python .device/scripts/exp51.py $R/exp51-fwd.csv --rows 1,16,128,256,512 --settings base,n8,n16 > $R/exp51-fwd.log 2>&1
echo "exp51 fwd rc=$? at $(( $(date +%s) - start )) s"
left=$(( 140 - ($(date +%s) - start) ))
timeout $left python .device/scripts/exp51.py $R/exp51-bwd.csv --ops silu_and_mul_backward --dtypes float32 --rows 4096,16384,65536 --settings base,b16 > $R/exp51-bwd.log 2>&1
echo "exp51 bwd rc=$? at $(( $(date +%s) - start )) s"
cat $R/exp51-fwd.log $R/exp51-bwd.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
