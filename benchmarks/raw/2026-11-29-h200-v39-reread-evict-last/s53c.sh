# s53 call C: HEAD's nox wheel (.device/s53c): the GPU tests call B left out (-k "not
# (forward_plans or fused_add)"), then in the time left ncu of float32 rms_norm at hidden
# 16384 (the re-reading build against compile-static) and a second float32 rms_norm
# sweep. Each part writes its own r.tgz under $OUT/<part>.
set -u
start=$(date +%s)
S=benchmarks/raw/2026-11-29-h200-v38-add-evict-last
mkdir -p $OUT/c1 $OUT/c2 $OUT/c3
W=$(ls .device/s53c/*.whl)
timeout 470 python scripts/gpu_test.py $W --no-sanitizer -k "not (forward_plans or fused_add)" > $OUT/c1/tests-rest.log 2>&1
echo "tests rest rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed" $OUT/c1/tests-rest.log | tail -4
left=$(( 520 - ($(date +%s) - start) ))
echo "ncu with ${left} s left"
OUT=$OUT/c2 WHEEL=.device/s53c BUDGET=$left bash $S/s52d.sh "rms_norm float32 16384x16384,4096x16384"
left=$(( 588 - ($(date +%s) - start) ))
OUT=$OUT/c3 WHEEL=.device/s53c LABEL=v39 TESTS=0 JOBS="rms_norm:float32" BUDGET=$left bash $S/s52c.sh
