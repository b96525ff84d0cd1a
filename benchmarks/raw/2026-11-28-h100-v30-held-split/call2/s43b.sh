# s43 call 2: the held split only at 2 vectors a thread, two waves and a tail of at least an
# eighth of a wave (rule) against HEAD (base), at rows call 1 did not run; sm_90 builds.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
ROWS=140,170,210,230,240,250,256,280,350,450,480,512
HID=8192,12288,14336,16384
for w in base rule; do mkdir -p /tmp/$w; pip install -q --no-deps --no-index --target /tmp/$w .device/$w/*.whl 2>/dev/null; done
PYTHONPATH=/tmp/rule python .device/scripts/ki.py $ROWS $HID,20480 > $R/kinfo-rule.txt 2>&1; echo "ki rc=$?"
python benchmarks/tools/ab_runs.py --base .device/base/*.whl --new .device/rule/*.whl --out $R/ab --timeout 150 -- \
  --impls fusedops --placements 1 --ops fused_add_rms_norm --dtypes bfloat16,float16 --rows $ROWS --hidden $HID > $R/ab.log 2>&1
echo "ab rc=$? $(date +%T)"; head -5 $R/ab/ab.txt
cd $OUT && tar czf r.tgz r && rm -rf r
