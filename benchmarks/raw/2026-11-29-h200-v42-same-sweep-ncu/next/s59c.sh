# s59 call C (prepared in s58): exp74, silu_and_mul's forward width at 1-16 rows. Both v42
# sweeps have the bf16 forward 1.1-2.3% behind at 1 and 16 rows (a rival's kernel: compile or
# compile-static, 64 blocks of 128 threads at 1 x 8192, one element a thread; ours 16 blocks of
# 256, two), and ncu put ours alone 13.4% behind compile at 1 x 8192 rotating. The width there
# (kNarrow, 4-byte vectors) was chosen on an H100 on the same tensors (v17).
# FUSEDOPS_EXP_SILU_SMALL=one|mid|wide sets the forward's width up to 16384 16-byte vectors
# (kNarrowBandMax: 1-16 rows of hidden up to 8192 in 16-bit): one element a thread, 8- or
# 16-byte vectors; each output is computed alone, so the bits are the same (call_patterns
# checks). For float32 `one` is the shipped width at 1 x 8192 (its kNarrow is one element).
# 128 x 4096 (65536 vectors) is past the switch: there all settings run one kernel, the noise.
# The wheel (.device/exp74) also holds exp73 (exp73.diff, then exp74.diff, on 2835231).
# About 4 minutes. Carry .device/exp74 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst74; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp74/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add silu_and_mul:bfloat16 "1x8192 1x4096 1x2048 16x2048 16x4096 16x8192 1x16384 128x4096"
add silu_and_mul:float16 "1x8192 16x4096"
add silu_and_mul:float32 "1x8192 16x4096"
PYTHONPATH=$D timeout 400 python benchmarks/tools/call_patterns.py $R/exp74.csv --cases ${c#,} \
  --rounds 2 --settings 'base=;one=FUSEDOPS_EXP_SILU_SMALL=one;mid=FUSEDOPS_EXP_SILU_SMALL=mid;wide=FUSEDOPS_EXP_SILU_SMALL=wide' \
  --impls compile,compile-static,liger > $R/exp74.log 2>&1
echo "exp74 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp74.log | cut -c1-220
cd $OUT && tar czf r.tgz r && rm -rf r
