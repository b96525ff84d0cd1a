# s62 call B (at most BUDGET, default 560 s). Carry WHEEL (v45's `nox -s build` wheel) and .whl.
# 1. The same-tensor sweeps v45 had not had (bf16 rms_norm, bf16 silu_and_mul) and the bf16
#    fused add's again (session 61's had it 2 -> 7 misses against v42's, ours level).
# 2. float32 rms_norm 128 x 16384 on the same tensors (Liger 5.7% ahead in session 61's
#    sweep): ncu of ours and Liger, three calls each in a row, no cache control, so the
#    later calls see the L2 the earlier left (compare the third of each).
# 3. The graph timeline of the two largest rotating misses of session 61's sweeps, the
#    float32 fused add 1024 x 2048 and 512 x 4096 (compile-static 7.0% and 5.7% ahead; v42's
#    ncu had the kernels alone level), and of the float32 rms_norm above on the same tensors.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst62b; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $WHEEL/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
export PYTHONPATH=$D
python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$D'))" ||
  { echo "fusedops does not come from $D"; exit 1; }
left() { echo $(( ${BUDGET:-560} - 15 - ($(date +%s) - start) )); }  # 15 s kept for the tar
# 2 and 3 first: short, and what the sweeps' budget must not cut.
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
timeout 120 ncu --profile-from-start off --clock-control none --cache-control none $S \
  -o $R/ncu-rms-f32-128x16384 python benchmarks/tools/ncu_fwd_probe.py --op rms_norm \
  --dtype float32 --shapes 128x16384 --impls fusedops,liger --repeat 3 > $R/ncu.log 2>&1
echo "ncu rc=$? at $(( $(date +%s) - start )) s"
ncu --import $R/ncu-rms-f32-128x16384.ncu-rep --page raw --csv > $R/ncu-rms-f32-128x16384.csv 2>&1
rm -f $R/ncu-rms-f32-128x16384.ncu-rep
timeout 120 python benchmarks/tools/graph_timeline_probe.py --csv $R/timeline-rotating.csv \
  --pattern rotating --impls fusedops,compile-static,liger \
  --cases fused_add_rms_norm:float32:1024x2048,fused_add_rms_norm:float32:512x4096 > $R/timeline-rotating.log 2>&1
echo "timeline rotating rc=$? at $(( $(date +%s) - start )) s"
timeout 60 python benchmarks/tools/graph_timeline_probe.py --csv $R/timeline-same.csv \
  --pattern same --impls fusedops,compile-static,liger \
  --cases rms_norm:float32:128x16384 > $R/timeline-same.log 2>&1
echo "timeline same rc=$? at $(( $(date +%s) - start )) s"
for job in rms_norm:bfloat16:same silu_and_mul:bfloat16:same fused_add_rms_norm:bfloat16:same; do
  op=${job%%:*}; rest=${job#*:}; dtype=${rest%%:*}; pattern=${rest##*:}
  l=$(left); [ $l -lt 60 ] && { echo "skipped $job (${l} s left)"; continue; }
  n=sweep-$op-$dtype-$pattern
  timeout $l python benchmarks/gpu_sweep.py --csv $R/$n.csv --label v45 --pattern $pattern \
    --ops $op --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy > $R/$n.log 2>&1
  echo "sweep $job rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/$n.log) lines"
done
cat $R/timeline-*.log | grep -v Warning | cut -c1-220
cd $OUT && tar czf r.tgz r && rm -rf r
