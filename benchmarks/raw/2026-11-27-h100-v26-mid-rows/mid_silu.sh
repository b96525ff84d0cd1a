# v26 call 12: silu_and_mul and its backward against their rivals at the rows between the sweep's grid
# (256, 512, 1536, 2048), d10774f's nox wheel (HEAD's kernels), two runs.
set -u
D=/tmp/inst; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/wheel/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
R=$OUT/r; mkdir -p $R
for run in 1 2; do
  timeout 280 python benchmarks/gpu_sweep.py --csv $R/mid-rows-silu-run$run.csv --label d10774f --ops silu_and_mul,silu_and_mul_backward --rows 256,512,1536,2048 --hidden 2048,4096,8192,16384 > $R/mid-rows-silu-run$run.log 2>&1
  echo "run $run rc=$? $(date +%T)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
