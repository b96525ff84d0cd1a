# s60 call B (prepared in s59): why one row of the fused add at hidden 8192 took 1.65-1.70 us in
# sweeps of ours alone and 1.98-2.04 us in sweeps that also timed the rivals (session 59). The
# same gpu_sweep.py shapes (1 and 16 rows; hidden 4096, which runs the single-pass kernel, and
# 8192, the cluster kernel on sm_90), swept with ours alone, with ours and each rival in turn,
# and with ours alone at one placement (no spacers, so the inputs land where the first
# allocation puts them). About 2 minutes. Carry WHEEL (default .device/s59, v43's nox wheel)
# and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
D=/tmp/inst60b; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D ${WHEEL:-.device/s59}/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$D
for op in fused_add_rms_norm rms_norm; do
  for impls in fusedops fusedops,copy fusedops,liger fusedops,compile-static fusedops,compile-static,liger,copy; do
    for placements in 3 1; do
      [ $placements = 1 ] && [ $impls != fusedops ] && continue
      left=$(( ${BUDGET:-200} - ($(date +%s) - start) ))
      [ $left -lt 15 ] && { echo "skipped $op $impls $placements (${left} s left)"; continue; }
      n=onerow-$op-${impls//,/+}-p$placements
      timeout $left python benchmarks/gpu_sweep.py --csv $R/$n.csv --label $impls --pattern rotating \
        --ops $op --dtypes bfloat16 --rows 1,16 --hidden 4096,8192 --impls $impls \
        --placements $placements > $R/$n.log 2>&1
      echo "$n rc=$? at $(( $(date +%s) - start )) s: $(grep -h 'fusedops 1x' $R/$n.log | tr '\n' ' ')"
    done
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
