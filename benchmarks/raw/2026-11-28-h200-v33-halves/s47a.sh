# s47 call A: fwd_variants.py's C = 4 in C = 2's order (flag 2048, plan 2; first GPU run),
# against plain C = 4 (plan 2) and the wheel's v8, 16-bit rows of 512-2048 vectors; then
# the host cost per call at 16 x 4096 bf16 on this host.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/head/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
timeout 330 python benchmarks/tools/fwd_variants.py .device/so/fwd_variants.so --out $R --dtypes bfloat16,float16 --hidden 4096,8192,10240,12288,16384 --rows 1,16,128,256,512,1024,2048,4096 --variants v8,v8+c4,v8+c4o2 > $R/variants.log 2>&1
echo "variants rc=$? at $(( $(date +%s) - start )) s"
tail -5 $R/variants.log
for run in 1 2; do
  left=$(( 560 - ($(date +%s) - start) ))
  if [ $left -lt 40 ]; then echo "host run $run skipped"; continue; fi
  timeout $left python benchmarks/host_overhead.py --device cuda --csv $R/host-run$run.csv > $R/host-run$run.log 2>&1
  echo "host run $run rc=$? at $(( $(date +%s) - start )) s"
done
cd $OUT && tar czf r.tgz r && rm -rf r
