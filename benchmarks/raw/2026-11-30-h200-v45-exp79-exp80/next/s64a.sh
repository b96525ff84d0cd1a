# s64 call A (prepared in s63; at most BUDGET, default 400 s). Carry .device/exp86 and .whl.
# 1. exp86 (exp86.diff on b867069 or later: exp85's wheel plus two modes): FUSEDOPS_EXP_ROWS2 =
#    5 exp85's Triton loads and their order (plain loads, the read-backs together, the weight
#    after the barrier evict_last), 8 those and both rows' warp sums in one 8-byte shared store
#    and load with the two rows' shuffle chains interleaved (the last two differences the SASS
#    shows from Triton's two-row program, sass-tri-x2-r2048-w8.txt), 9 exp83's kernel with
#    only the packed round; the plan and the bits as exp83's. Three patterns, two rounds.
# 2. ncu with per-instruction counters (SourceCounters) of ours (the shipped kernel, then
#    exp86 mode 8, set for the whole process) and exp81's three plain Triton forms at the
#    float32 fused add 1024 x 2048 (exp81_ncu.py), no cache control; exported as the raw page
#    and as the source page with SASS, to read where each one's stalls fall.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
E=/tmp/inst86; rm -rf $E; mkdir -p $E
pip install -q --no-deps --no-index --target $E .device/exp86/*.whl \
  .whl/liger_kernel-0.8.5-py3-none-any.whl > $R/pip.log 2>&1 || { cat $R/pip.log; exit 1; }
PYTHONPATH=$E python -c "import fusedops, sys; sys.exit(not fusedops.__file__.startswith('$E'))" ||
  { echo "fusedops does not come from $E"; exit 1; }
c=""
add() { for s in $2; do c="$c,$1:$s"; done; }
add fused_add_rms_norm:float32 "512x2048 1024x2048 2048x2048 512x4096"
add fused_add_rms_norm:bfloat16 "1024x2048"
add rms_norm:bfloat16 "1024x2048"
PYTHONPATH=$E timeout 150 python benchmarks/tools/call_patterns.py $R/exp86.csv \
  --cases ${c#,} --rounds 2 --impls compile-static,liger \
  --settings 'base=;r5=FUSEDOPS_EXP_ROWS2=5;r8=FUSEDOPS_EXP_ROWS2=8;r9=FUSEDOPS_EXP_ROWS2=9' \
  > $R/exp86.log 2>&1
echo "exp86 rc=$? at $(( $(date +%s) - start )) s"
grep -v Warning $R/exp86.log | cut -c1-220
S="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis"
S="$S --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum"
for mode in base 8; do
  left=$(( ${BUDGET:-400} - 15 - ($(date +%s) - start) ))
  [ $left -lt 40 ] && { echo "ncu $mode skipped ($left s left)"; continue; }
  env $([ $mode = base ] || echo FUSEDOPS_EXP_ROWS2=$mode) PYTHONPATH=$E timeout $left \
    ncu --profile-from-start off --clock-control none --cache-control none $S -o $R/ncu-$mode \
    python benchmarks/raw/2026-11-30-h200-v45-exp79-exp80/exp81_ncu.py > $R/ncu-$mode.log 2>&1
  echo "ncu $mode rc=$? at $(( $(date +%s) - start )) s"
  ncu --import $R/ncu-$mode.ncu-rep --page raw --csv > $R/ncu-$mode.csv 2>&1
  ncu --import $R/ncu-$mode.ncu-rep --page source --csv --print-source sass > $R/ncu-$mode-source.csv 2>&1
  echo "source export rc=$? $(wc -c < $R/ncu-$mode-source.csv) bytes"
  rm -f $R/ncu-$mode.ncu-rep
done
cd $OUT && tar czf r.tgz r && rm -rf r
