# v25 call 2: sanitizers on 45c24f9's wheel (h1), same bits h0 (325574c) vs h1, silu A/B h0 vs h1
set -u
T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
W=$(ls .device/h1/*.whl)
timeout 200 python scripts/gpu_test.py --sanitizer-only $W > $OUT/san.log 2>&1; echo "san rc=$?"; tail -8 $OUT/san.log
for b in h0 h1; do mkdir -p /tmp/$b; pip install -q --no-deps --no-index --target /tmp/$b .device/$b/*.whl 2>/dev/null; done
for b in h0 h1; do PYTHONPATH=/tmp/$b timeout 120 python benchmarks/tools/same_bits.py save $OUT/bits-$b.json > $OUT/bits-$b.log 2>&1; echo "bits $b rc=$?"; done
python benchmarks/tools/same_bits.py compare $OUT/bits-h0.json $OUT/bits-h1.json > $OUT/bits-compare.txt 2>&1; echo "compare rc=$?"; tail -3 $OUT/bits-compare.txt
one() { s=$(date +%s)
  PYTHONPATH=/tmp/$1 timeout $(left) python benchmarks/gpu_sweep.py --impls fusedops --placements 1 --dtypes bfloat16,float16,float32 --ops silu_and_mul,silu_and_mul_backward --rows 1,16,128,1024,4096 --label $1 --csv $OUT/ab-$1-run$2.csv > /dev/null 2>$OUT/ab-$1-run$2.err
  echo "$1 run$2 rc=$? $(( $(date +%s) - s )) s left $(left)"; }
one h0 1; one h1 1; one h1 2; one h0 2
