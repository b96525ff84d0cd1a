# s62 call E (at most BUDGET, default 450 s). Carry WHEEL (v45's `nox -s build` wheel), .whl.
# 1. DRAM bytes per call in the rotating graph of the float32 fused add at 1024 x 2048 and
#    512 x 4096 (compile-static 7.0% and 5.7% ahead in session 61's sweep; call B's timeline
#    had our kernel 6-8% slower inside the graph, v42's ncu had it level alone after a
#    flush): graph_dram_probe.py, two placements, ours, compile-static and Liger.
# 2. The three rotating misses whose ncu gap passed 5.3% (call D's and v42's tables), five
#    flushed calls of ours and of the rival each, to see the call-to-call spread at
#    2-3 us kernels: bf16 rms_norm 16 x 2048 and fp16 128 x 2048 against Liger, bf16
#    silu_and_mul 16 x 4096 against compile.
# 3. A second rotating sweep of the fp16 and bf16 fused add (session 60's, on v44's
#    kernels, which v45 did not change, had 9 and 5 misses).
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst62e; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $WHEEL/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
export PYTHONPATH=$D
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
for shape in 1024x2048 512x4096; do
  timeout 90 ncu --profile-from-start off --graph-profiling graph --cache-control none \
    --clock-control none --metrics $M --csv --page raw \
    python benchmarks/tools/graph_dram_probe.py --op fused_add_rms_norm --dtype float32 \
    --shape $shape --impls fusedops,compile-static,liger --placements 2 --pattern rotating \
    > $R/graph-dram-f32-add-$shape.csv 2> $R/graph-dram-f32-add-$shape.err
  echo "graph dram $shape rc=$? at $(( $(date +%s) - start )) s"
done
for job in "rms_norm bfloat16 16x2048 fusedops,liger" "rms_norm float16 128x2048 fusedops,liger" \
           "silu_and_mul bfloat16 16x4096 fusedops,compile"; do
  set -- $job
  timeout 90 ncu --profile-from-start off --clock-control none --cache-control all \
    --metrics gpu__time_duration.sum --csv --page raw \
    python benchmarks/tools/ncu_fwd_probe.py --op $1 --dtype $2 --shapes $3 --impls $4 \
    --repeat 5 > $R/ncu5-$1-$2-$3.csv 2> $R/ncu5-$1-$2-$3.err
  echo "ncu5 $1 $2 $3 rc=$? at $(( $(date +%s) - start )) s"
done
for dtype in float16 bfloat16; do
  left=$(( ${BUDGET:-450} - 15 - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped $dtype (${left} s left)"; continue; }
  n=sweep-fused_add_rms_norm-$dtype-rotating
  timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv --label v45 --pattern rotating \
    --ops fused_add_rms_norm --dtypes $dtype --impls fusedops,compile,compile-static,liger,copy \
    > $R/$n.log 2>&1
  echo "sweep $dtype rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/$n.log) lines"
done
cd $OUT && tar czf r.tgz r && rm -rf r
