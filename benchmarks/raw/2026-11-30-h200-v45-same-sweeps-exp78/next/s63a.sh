# s63 call A (prepared in s62; at most BUDGET, default 420 s). Carry .device/exp79 and .whl.
# 1. inductor's kernel for the float32 fused add at 1024 x 2048 and 512 x 4096 (compile-static:
#    gpu_sweep.py's torch.compile of the float32 math, no dimension dynamic), in two processes,
#    each with an inductor cache of its own (inductor keeps an autotuned kernel's best config
#    on disk, and a second process with the same cache would reuse it): the source
#    (TORCH_LOGS=output_code), each config's autotuning time (the debug log of
#    torch._inductor.runtime.triton_heuristics) and that process's time per call in the
#    sweep's rotating graph, after gpu_sweep.py's 3 warm-up graphs. Does each process pick its
#    own config, and does the time follow?
#    Session 62: inside the rotating graph compile-static's kernel ran 9.18 and 9.25 us,
#    ours 9.95 and 9.76, Liger's 10.08 and 9.92; alone after a flush (v42's ncu) ours and
#    compile-static's were level; over a graph replay each read 16.8 MB and wrote 16.1-16.3
#    MB a call.
# 2. exp79 (exp79.diff on f3ae084 or later): FUSEDOPS_EXP_STREAM=both launches every
#    single-pass build that reads x (and the residual) with plain loads at 1-2 vectors a
#    thread with ld.global.cs loads instead, the plan and the bits the shipped ones. Cases:
#    the rotating misses seen in both of session 62's runs whose kernel exp79 reaches (not
#    the cluster kernel: 16-bit 512 x 8192 and 256 x 16384; not float32 rms_norm at 4
#    vectors a thread), the float32 fused add 512 x 4096 (a miss in one run), and the bf16
#    fused add 1024 x 8192 (64 MiB moved, where v40-v41 measured such loads: faster on the
#    same tensors, 1.3-2.9% slower rotating), three patterns, against the shipped kernels.
#    v42's exp67 had timed the kStreamAdd build (streamed loads, 1024-thread rows) from
#    40 MiB moved in the three patterns.
#    exp61 had them 9.9-37.7% slower on the same tensors at 16-32 MiB moved: expected slower
#    there; the question is rotating and with a consumer.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst79; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp79/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
for p in 1 2; do
  rm -rf /tmp/inductor-$p  # a machine kept warm between calls would keep an earlier cache
  PYTHONPATH=$E TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-$p TORCH_LOGS=output_code timeout 100 \
    python - > $R/inductor-f32-add-process$p.log 2>&1 <<'PY'
import logging, sys, torch
logging.basicConfig()
logging.getLogger("torch._inductor.runtime.triton_heuristics").setLevel(logging.DEBUG)
sys.path.insert(0, "benchmarks")
from gpu_sweep import (
    WARM_UP_GRAPHS, calls_per_graph, graph_us, impl_step, make_inputs, shape_input_sets, warm_up,
)
warm_up(WARM_UP_GRAPHS)  # a process's first graphs ran fast (NOTES.md v45)
op, dtype = "fused_add_rms_norm", torch.float32
for rows, hidden in ((1024, 2048), (512, 4096)):
    n = shape_input_sets("rotating", op, rows, hidden, dtype)
    sets = [make_inputs(op, rows, hidden, dtype) for _ in range(n)]
    step = impl_step(op, "compile-static", "rotating", sets, None)
    us = graph_us(step, calls_per_graph(op, rows, hidden, dtype, n))
    print(f"RESULT {rows}x{hidden} compile-static rotating {us:.3f} us a call", flush=True)
PY
  echo "inductor process $p rc=$? at $(( $(date +%s) - start )) s"
  grep "^RESULT" $R/inductor-f32-add-process$p.log
done
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "128x2048 128x8192 256x4096 512x2048 512x4096 1024x2048"
add fused_add_rms_norm:bfloat16 "256x8192 512x4096 1024x2048 1024x8192"
add fused_add_rms_norm:float16 "128x4096 256x4096 256x8192 512x4096 1024x2048"
add rms_norm:bfloat16 "16x2048 128x2048 512x4096"
add rms_norm:float16 "1x2048 16x2048 128x2048"
left=$(( ${BUDGET:-420} - 10 - ($(date +%s) - start) ))  # 10 s kept for the tar
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
