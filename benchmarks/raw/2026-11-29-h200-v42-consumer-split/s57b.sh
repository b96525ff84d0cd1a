# s57 call B: the whole GPU suite's first half on 66c5868's wheel (`nox -s build`, carried in
# .device/s57): both sanitizers and the forward-plan tests (with the plan edges' tests, not yet
# run on a GPU). Then, in the time left, the DRAM bytes and L2 hit rate of each kernel of the
# consumer and rotating patterns (graph_dram_probe.py --pattern under ncu --graph-profiling
# node) where call A found our kernel slower only with a consumer: rms_norm bf16 4096 x 8192;
# and the fused add bf16 1024 x 16384, where the sum after ours was slower.
# Carry .device/s57 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
W=$(ls .device/s57/*.whl)
timeout 240 python scripts/gpu_test.py $W --sanitizer-only > $R/sanitizer.log 2>&1
echo "sanitizer rc=$? at $(( $(date +%s) - start )) s"
grep -E "PASS|FAIL|ok  |FAIL " $R/sanitizer.log | tail -8 | cut -c1-150
timeout 200 python scripts/gpu_test.py $W --no-sanitizer -k forward_plans > $R/tests-k.log 2>&1
echo "forward_plans rc=$? at $(( $(date +%s) - start )) s"
grep -E "passed|failed|error" $R/tests-k.log | tail -6 | cut -c1-250
D=/tmp/inst; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum
for spec in "consumer rms_norm 4096x8192" "consumer fused_add_rms_norm 1024x16384" \
            "rotating rms_norm 4096x8192" "rotating fused_add_rms_norm 1024x16384"; do
  set -- $spec
  left=$(( 575 - ($(date +%s) - start) ))
  [ $left -lt 40 ] && { echo "skipped $spec (${left} s left)"; continue; }
  name=dram-$1-$2-$3
  timeout $left ncu --profile-from-start off --graph-profiling node --cache-control none \
    --clock-control none --metrics $M --csv --page raw python benchmarks/tools/graph_dram_probe.py \
    --pattern $1 --op $2 --dtype bfloat16 --shape $3 --impls fusedops,compile-static,liger \
    --placements 1 > $R/$name.csv 2> $R/$name.err
  echo "$name rc=$? at $(( $(date +%s) - start )) s, $(wc -l < $R/$name.csv) lines"
done
cd $OUT && tar czf r.tgz r && rm -rf r
