# s60 call 5: (1) why the first shape of a sweep of ours alone runs faster (call 1: bf16
# 1 x 4096 1.41-1.51 us alone, 1.77-1.87 with any other impl beside ours, copy included;
# 16 x 4096 too when one placement brings it sooner): rms_norm bf16 at hidden 4096, rows
# 1,16,1,16 (the same shapes again later in the same process), ours alone and beside copy,
# with the SM clock, power and temperature sampled every 20 ms; (2) v44's whole rotating sweep
# of the bf16 fused add with every rival, in the time left. Carry wheelhouse and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst60g; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D wheelhouse/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 20 > $R/clocks.csv 2>&1 &
smi=$!
for impls in fusedops fusedops,copy fusedops; do
  n=order-${impls//,/+}-$(date +%s)
  echo "$n begins $(date +%H:%M:%S.%N)" >> $R/marks.txt
  timeout 120 python benchmarks/gpu_sweep.py --csv $R/$n.csv --label $impls --pattern rotating \
    --ops rms_norm --dtypes bfloat16 --rows 1,16,1,16 --hidden 4096 --impls $impls > $R/$n.log 2>&1
  echo "$n ends $(date +%H:%M:%S.%N) rc=$?: $(grep -h 'fusedops ' $R/$n.log | awk '{print $4, $5}' | tr '\n' ' ')" | tee -a $R/marks.txt
done
kill $smi
left=$(( ${BUDGET:-280} - ($(date +%s) - start) ))
if [ $left -ge 60 ]; then
  timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-fused_add_rms_norm-bfloat16-rotating.csv \
    --label v44 --pattern rotating --ops fused_add_rms_norm --dtypes bfloat16 \
    --impls fusedops,compile,compile-static,liger,copy > $R/sweep-fused_add_rms_norm-bfloat16-rotating.log 2>&1
  echo "sweep rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-fused_add_rms_norm-bfloat16-rotating.csv) lines"
fi
cd $OUT && tar czf r.tgz r && rm -rf r
