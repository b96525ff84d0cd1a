set -u
mkdir -p $OUT/a $OUT/c
(CUDA_VISIBLE_DEVICES=0 OUT=$OUT/a bash .device/scripts/s49a.sh > $OUT/a.log 2>&1) &
(CUDA_VISIBLE_DEVICES=1 OUT=$OUT/c bash .device/scripts/s49c.sh > $OUT/c.log 2>&1) &
wait
cat $OUT/a.log; echo ----; cat $OUT/c.log
