# s51 call F: a second rms_norm sweep on HEAD's nox wheel, then the rest of the GPU suite
# (call E ran the forward-plan and rms_norm tests), cut at the call's budget.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s51/*.whl)
D=/tmp/inst51f; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
PYTHONPATH=$D timeout 150 python benchmarks/gpu_sweep.py --csv $R/sweep-rms-run2.csv --label v37 --ops rms_norm > $R/sweep-rms-run2.log 2>&1
echo "rms sweep 2 rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/sweep-rms-run2.csv) lines"
left=$(( ${BUDGET:-560} - ($(date +%s) - start) ))
OMP_NUM_THREADS=16 timeout $left python scripts/gpu_test.py $W --no-sanitizer -k "not (forward_plans or rms_norm)" > $R/tests-rest.log 2>&1
echo "tests rest rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|PASS|FAIL" $R/tests-rest.log | tail -5
tail -c 600 $R/tests-rest.log
cd $OUT && tar czf r.tgz r && rm -rf r
