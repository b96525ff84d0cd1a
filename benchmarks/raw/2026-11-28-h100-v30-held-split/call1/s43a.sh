# s43 call 1: the wave-and-tail split with its clusters held (dynamic shared memory) to
# the fewest resident that keep the waves (cap) against HEAD (base); sm_90 builds.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for w in base cap; do mkdir -p /tmp/$w; pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null; done
PYTHONPATH=/tmp/cap python .device/scripts/ki.py 133,160,200,256,264,300,400,512,528 8192,10240,12288,16384,20480,24576 > $R/kinfo-cap.txt 2>&1; echo "ki rc=$?"
grep -c . $R/kinfo-cap.txt
python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/cap/*.whl --out $R/c2 --timeout 150 -- \
  --impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 133,160,200,256,264,300,400,512,528 --hidden 8192,10240,12288,16384 > $R/c2.log 2>&1
echo "ab c2 rc=$? $(date +%T)"; tail -6 $R/c2.log
python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/cap/*.whl --out $R/c4 --timeout 100 -- \
  --impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows 133,160,200,256,264 --hidden 18432,20480,24576 > $R/c4.log 2>&1
echo "ab c4 rc=$? $(date +%T)"; tail -6 $R/c4.log
cd $OUT && tar czf r.tgz r && rm -rf r
