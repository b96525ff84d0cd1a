# v24 call 6: 9b36b1c's nox wheel: the silu forward against torch.compile and Liger at 1-4096 rows, twice
set -u
T0=$(date +%s); left() { echo $(( 300 - ($(date +%s) - T0) )); }
W=$(ls .device/wheel/*.whl)
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D $W .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
sw() { s=$(date +%s)
  PYTHONPATH=$D timeout $(left) python benchmarks/gpu_sweep.py --ops silu_and_mul --rows 1,16,128,1024,4096 --label v24 --csv $OUT/sweep-silu-fwd-$1.csv > /dev/null 2>$OUT/sweep-silu-fwd-$1.err
  echo "$1 rc=$? $(( $(date +%s) - s )) s left $(left)"; }
sw run1; sw run2
