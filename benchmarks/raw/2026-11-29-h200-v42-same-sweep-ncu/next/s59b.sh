# s59 call B (prepared in s58): where the sweep's misses lie when ncu finds our kernel alone as
# fast as the rival's or faster (RESULTS, session 58: 7 of 35 same-tensor misses faster alone by
# 6-26%, 7 of 42 rotating ones). graph_timeline_probe.py splits a graph's time per call into
# the kernel's duration and the gap before the next kernel starts, in the sweep's own pattern:
# is the miss a longer kernel inside the graph (what the L2 holds between calls) or a longer gap
# (launch and tail)? About 3 minutes. On 66c5868's nox wheel (.device/s57; WHEEL= another).
# Carry .device/s57 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst59b; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/s57}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
same=fused_add_rms_norm:float16:256x4096,fused_add_rms_norm:bfloat16:256x4096,rms_norm:bfloat16:512x16384
same=$same,fused_add_rms_norm:float32:128x8192,fused_add_rms_norm:float32:512x8192
same=$same,fused_add_rms_norm:float32:1024x4096,fused_add_rms_norm:float16:4096x2048
rot=fused_add_rms_norm:float16:256x4096,rms_norm:bfloat16:128x2048,rms_norm:bfloat16:512x4096
rot=$rot,rms_norm:float32:256x4096,fused_add_rms_norm:float32:512x8192
for job in "same $same" "rotating $rot"; do
  set -- $job
  PYTHONPATH=$D timeout 200 python benchmarks/tools/graph_timeline_probe.py --pattern $1 \
    --cases $2 --impls fusedops,compile-static,liger --calls 16 --csv $R/timeline-$1.csv \
    > $R/timeline-$1.log 2>&1
  echo "timeline $1 rc=$? at $(( $(date +%s) - start )) s"
done
grep -v Warning $R/timeline-*.log | cut -c1-260
cd $OUT && tar czf r.tgz r && rm -rf r
