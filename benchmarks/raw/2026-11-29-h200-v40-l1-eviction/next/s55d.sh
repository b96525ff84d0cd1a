# s55 call D: exp65's band (the re-read with streamed loads helped at 512 x 16384, 64 MiB
# moved, only): 496, 544 and 576 rows (61-72 MiB moved, inside stream_planned's band) and
# 608 (76 MiB, outside), both 16-bit types, three patterns. About 2 minutes. Carry
# .device/exp65 and .whl.
set -u
start=$(date +%s)
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
N=benchmarks/raw/2026-11-29-h200-v40-l1-eviction/next
D=/tmp/inst65; rm -rf $D; mkdir -p $D
pip install -q --no-deps --no-index --target $D .device/exp65/*.whl .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
c=""
for dt in bfloat16 float16; do for r in 496 544 576 608; do
  c="$c,fused_add_rms_norm:$dt:${r}x16384"; done; done
PYTHONPATH=$D timeout 200 python $N/patterns_ab.py $R/exp65-band.csv --cases ${c#,} \
  --settings 'plain=FUSEDOPS_EXP_NOSTREAM=1;stream=;reread_stream=FUSEDOPS_EXP_ADD_REREAD=1' \
  > $R/exp65-band.log 2>&1
echo "exp65 band rc=$? at $(( $(date +%s) - start )) s"
cut -c1-170 $R/exp65-band.log | grep -v Warning
cd $OUT && tar czf r.tgz r && rm -rf r
