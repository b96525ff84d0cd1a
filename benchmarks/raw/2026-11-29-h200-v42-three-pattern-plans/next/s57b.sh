# s57 call B (prepared in s56, not run: no device time left): the plan edges' GPU tests (the kStreamAdd band at 3/4 and 7/4 of the L2 and a
# row past each; evict_last_pays at 3/2 of the L2 and a row past it) on the nox wheel of
# the review's fixes (3/2 of the L2 computed in 64 bits). Carry .device/s56g (the nox wheel of the commit after 0f756ea; else build one).
set -u
R=$OUT/r; mkdir -p $R
W=$(ls .device/s56g/*.whl)
timeout 85 python scripts/gpu_test.py $W --no-sanitizer -k "evict_last_only_well_past or streams_and_rereads" > $R/tests-edges.log 2>&1
echo "edges rc=$?"
grep -E "passed|failed|error" $R/tests-edges.log | tail -4 | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
