# s47 call C: the halves rule (halves_planned) as a wheel (pip wheel, sm_90): the forward
# plan tests, then an A/B against HEAD's kernels (a1a8967's nox wheel) taking turns,
# rms_norm 16-bit past the SMs, with Liger as the unchanged control.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 200 python scripts/gpu_test.py .device/s47/*.whl --no-sanitizer -k forward_plans > $R/tests.log 2>&1; echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error" $R/tests.log | tail -3
left=$(( 570 - ($(date +%s) - start) ))
python benchmarks/tools/ab_runs.py --base .device/head/*.whl --new .device/s47/*.whl --out $R/ab --timeout $(( left / 4 - 5 )) -- --impls fusedops,liger --ops rms_norm --dtypes bfloat16,float16 --rows 133,256,512,1024,2048,4096,16384,65536 --hidden 4096,8192,12288,16384 > $R/ab.log 2>&1; echo "ab rc=$? at $(( $(date +%s) - start )) s"
tail -25 $R/ab.log
cd $OUT && tar czf r.tgz r && rm -rf r
