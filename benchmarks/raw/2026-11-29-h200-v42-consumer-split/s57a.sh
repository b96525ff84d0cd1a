# s57 call A (prepared in s56): where the consumer pattern's gaps lie. v42's wheel
# (.device/s56e, the nox build of 95faf5f; else build one). graph_timeline_probe.py
# --pattern consumer splits each call into the op's kernel and the sum's, for ours,
# compile-static and Liger, at the shapes where compile-static led with a consumer
# (RESULTS v42: the fused add at 1024 x 16384 and 256 x 8192, rms_norm at 4096 x 8192);
# the same in the rotating pattern for comparison; and the launch shapes of the rivals
# at 448 and 768 x 16384, where they still lead v42. About 4 minutes. Carry .device/s56e, .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/s56e/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=fused_add_rms_norm:bfloat16:1024x16384,fused_add_rms_norm:bfloat16:256x8192,rms_norm:bfloat16:4096x8192
# and where the rivals still lead v42 (RESULTS v42, call E): their grid, block and registers
c=$c,fused_add_rms_norm:bfloat16:448x16384,fused_add_rms_norm:bfloat16:768x16384
for pattern in consumer rotating; do
  PYTHONPATH=$D timeout 200 python benchmarks/tools/graph_timeline_probe.py --pattern $pattern \
    --cases $c --impls fusedops,compile-static,liger --calls 16 --csv $R/timeline-$pattern.csv \
    > $R/timeline-$pattern.log 2>&1
  echo "timeline $pattern rc=$? at $(( $(date +%s) - start )) s"
done
grep -v Warning $R/timeline-*.log | cut -c1-260
cd $OUT && tar czf r.tgz r && rm -rf r
