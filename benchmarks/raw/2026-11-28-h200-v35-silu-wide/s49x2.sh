# s49 on two GPUs of one host: s49d (suite part 1 + norm sweep run 1) on GPU 0,
# s49e (suite part 2 + sanitizers) on GPU 1, side by side.
set -u
mkdir -p $OUT/d $OUT/e
(CUDA_VISIBLE_DEVICES=0 OUT=$OUT/d bash .device/scripts/s49d.sh > $OUT/d.log 2>&1) &
(CUDA_VISIBLE_DEVICES=1 OUT=$OUT/e bash .device/scripts/s49e.sh > $OUT/e.log 2>&1) &
wait
cat $OUT/d.log; echo ----; cat $OUT/e.log
