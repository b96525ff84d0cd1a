# s51 call D: exp55 (x read evict_last with only the last rows set back to normal, beside el
# and eld) and the victim probe of what each leaves in the L2.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst54; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp55/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 300 python .device/scripts/exp55.py $R/exp55.csv > $R/exp55.log 2>&1
echo "exp55 rc=$? at $(( $(date +%s) - start )) s"
cut -c1-160 $R/exp55.log
cd $OUT && tar czf r.tgz r && rm -rf r
