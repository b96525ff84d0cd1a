# s51 call B: exp53 (rms_norm past the L2 with x read evict_last; 16-bit rows in plain C = 2
# blocks), then ncu of base and el at two of the misses (bf16 65536 x 8192, float32 16384 x 2048).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst53; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp53/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
timeout 330 python .device/scripts/exp53.py $R/exp53.csv > $R/exp53.log 2>&1
echo "exp53 rc=$? at $(( $(date +%s) - start )) s"
S="--section SpeedOfLight --section Occupancy --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum"
for el in 0 1; do
  for spec in "bfloat16 65536x8192" "float32 16384x2048"; do
    set -- $spec
    left=$(( ${BUDGET:-540} - ($(date +%s) - start) ))
    if [ $left -lt 30 ]; then echo "ncu el=$el $1 skipped"; continue; fi
    FUSEDOPS_EXP_EL=$el timeout $(( left < 60 ? left : 60 )) ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/ncu-el$el-$1 python benchmarks/tools/ncu_fwd_probe.py --op rms_norm --dtype $1 --shapes $2 --impls fusedops --repeat 2 > $R/ncu-el$el-$1.log 2>&1
    ncu --import $R/ncu-el$el-$1.ncu-rep --page raw --csv > $R/ncu-el$el-$1.csv 2>&1; rm -f $R/ncu-el$el-$1.ncu-rep
    echo "ncu el=$el $1 at $(( $(date +%s) - start )) s"
  done
done
cut -c1-160 $R/exp53.log
cd $OUT && tar czf r.tgz r && rm -rf r
