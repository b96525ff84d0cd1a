# s54 call B: the v40 nox wheel (.device/s54b: L1 priorities on float32 rms_norm's
# past-L2 re-read): the forward-plan GPU tests, the float32 rms_norm sweep with
# compile-static, the fused add's graph timeline (kernel time against the gap between
# kernels) and the DRAM bytes of one graph replay under ncu at the four shapes the
# sweep has it behind compile-static, then a float16 rms_norm sweep, cut at the budget.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s54b/*.whl)
timeout 150 python scripts/gpu_test.py $W --no-sanitizer -k "forward_plans" > $R/tests-k.log 2>&1
echo "tests -k rc=$? at $(( $(date +%s) - start )) s"
D=/tmp/inst54b; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO['git_sha'])"
sweep() {  # op dtype
  left=$(( 575 - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "skipped sweep $1 $2 (${left} s left)"; return; }
  timeout $left python benchmarks/gpu_sweep.py --csv $R/sweep-$1-$2.csv --label v40 \
    --ops $1 --dtypes $2 --impls fusedops,compile,compile-static,liger,copy > $R/sweep-$1-$2.log 2>&1
  echo "sweep $1 $2 rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-$1-$2.log) lines"
}
sweep rms_norm float32
CASES=fused_add_rms_norm:bfloat16:4096x2048,fused_add_rms_norm:bfloat16:1024x8192,fused_add_rms_norm:float32:1024x4096,fused_add_rms_norm:float32:512x8192
timeout 90 python benchmarks/tools/graph_timeline_probe.py --calls 8 --cases $CASES \
  --impls fusedops,compile-static --csv $R/timeline.csv > $R/timeline.log 2>&1
echo "timeline rc=$? at $(( $(date +%s) - start )) s"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum
for s in bfloat16:1024x8192 float32:512x8192; do
  left=$(( 575 - ($(date +%s) - start) ))
  [ $left -lt 200 ] && { echo "skipped dram $s"; continue; }
  timeout 60 ncu --profile-from-start off --graph-profiling graph --cache-control none --clock-control none \
    --metrics $M --csv --page raw python benchmarks/tools/graph_dram_probe.py --op fused_add_rms_norm \
    --dtype ${s%%:*} --shape ${s##*:} --impls fusedops,compile-static --placements 2 > $R/dram-${s%%:*}.csv 2>&1
  echo "dram $s rc=$? at $(( $(date +%s) - start )) s"
done
# inductor's fused add kernels at two of those shapes: which loads and stores carry an
# eviction policy
TORCH_LOGS=output_code timeout 60 python - > $R/inductor-fused-add.log 2>&1 <<'PY'
import sys
sys.path.insert(0, "benchmarks")
import torch
from gpu_sweep import implementation, make_inputs
for dtype, rows, hidden in ((torch.bfloat16, 1024, 8192), (torch.float32, 512, 8192)):
    fn = implementation("fused_add_rms_norm", "compile-static", make_inputs("fused_add_rms_norm", rows, hidden, dtype), None)
    fn()
    torch.cuda.synchronize()
PY
echo "inductor code rc=$? at $(( $(date +%s) - start )) s"
grep -E "tl.load|tl.store|def triton|XBLOCK|R0_BLOCK|num_warps" $R/inductor-fused-add.log | cut -c1-200 | head -30
sweep rms_norm float16
grep -E "passed|failed" $R/tests-k.log | tail -2
cat $R/timeline.log | cut -c1-220
cd $OUT && tar czf r.tgz r && rm -rf r
