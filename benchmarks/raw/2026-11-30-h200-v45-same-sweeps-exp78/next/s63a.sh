# s63 call A (prepared in s62; at most BUDGET, default 300 s). Carry .device/exp79 and .whl.
# 1. inductor's kernel for the float32 fused add at 1024 x 2048 and 512 x 4096 (compile-static:
#    gpu_sweep.py's torch.compile of the float32 math, no dimension dynamic), its source as
#    TORCH_LOGS=output_code prints it: what it reads evict_first or evict_last, its block and
#    loop. Session 62: inside the rotating graph its kernel ran 9.18 and 9.25 us where ours ran
#    9.95 and 9.76 (Liger's 10.08 and 9.92); alone after a flush v42's ncu had them level; over
#    a graph replay each reads 16.8 MB and writes 16.1-16.3 MB a call.
# 2. exp79 (exp79.diff on f3ae084 or later): FUSEDOPS_EXP_STREAM=both launches every
#    single-pass build at 1-2 vectors a thread that reads x and the residual with plain loads
#    with ld.global.cs loads instead, the plan and the bits the shipped ones. At the rotating
#    misses of 16-32 MiB moved and four controls, three patterns, against the shipped kernels.
#    v41 found such loads slower rotating at 64 MiB (1.3-2.9%) and exp61 9.9-37.7% slower on
#    the same tensors at 16-32 MiB: expected to lose on the same tensors; the question is
#    rotating and with a consumer.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst79; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp79/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
PYTHONPATH=$E TORCH_LOGS=output_code timeout 90 python - > $R/inductor-f32-add.log 2>&1 <<'PY'
import sys, torch
sys.path.insert(0, "benchmarks")
from gpu_sweep import implementation, make_inputs
for rows, hidden in ((1024, 2048), (512, 4096)):
    inputs = make_inputs("fused_add_rms_norm", rows, hidden, torch.float32)
    implementation("fused_add_rms_norm", "compile-static", inputs, None)()
    torch.cuda.synchronize()
PY
echo "inductor rc=$? at $(( $(date +%s) - start )) s"
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "128x2048 256x4096 256x8192 512x2048 512x4096 1024x2048"
add fused_add_rms_norm:bfloat16 "512x4096 512x8192 1024x2048 1024x8192"
add fused_add_rms_norm:float16 "128x4096"
add rms_norm:float32 "256x4096 512x8192"
add rms_norm:bfloat16 "512x4096"
left=$(( ${BUDGET:-300} - 10 - ($(date +%s) - start) ))  # 10 s kept for the tar
if [ $left -ge 60 ]; then
  PYTHONPATH=$E timeout $left python benchmarks/tools/call_patterns.py $R/exp79.csv \
    --cases ${c#,} --rounds 2 --settings 'base=;stream=FUSEDOPS_EXP_STREAM=both' \
    --impls compile-static,liger > $R/exp79.log 2>&1
  echo "exp79 rc=$? at $(( $(date +%s) - start )) s"
  grep -v Warning $R/exp79.log | cut -c1-200
else
  echo "exp79 skipped (${left} s left)"
fi
cd $OUT && tar czf r.tgz r && rm -rf r
