# s49 call F: exp50.py on the experiment wheel (.device/exp50: 8fcccda + exp-silu.diff),
# silu_and_mul forward past the L2 in 16-byte vectors and 32-bit indexing by vectors.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst50; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp50/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 300 python .device/scripts/exp50.py $R/exp50-fwd.csv > $R/exp50-fwd.log 2>&1
echo "exp50 fwd rc=$? at $(( $(date +%s) - start )) s"
left=$(( 420 - ($(date +%s) - start) ))
timeout $left python .device/scripts/exp50.py $R/exp50-bwd.csv --ops silu_and_mul_backward --rows 16384,65536 --hidden 8192,16384 > $R/exp50-bwd.log 2>&1
echo "exp50 bwd rc=$? at $(( $(date +%s) - start )) s"
cat $R/exp50-fwd.log $R/exp50-bwd.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
