# s43 call 5: why racecheck's run of the workload ended early: the held split launches alone.
D=/tmp/inst; mkdir -p $D; pip install -q --no-deps --no-index --target $D .device/head/*.whl 2>/dev/null
export PYTHONPATH=$D
timeout 100 compute-sanitizer --tool racecheck python .device/scripts/rc.py 2>&1 | tail -25; echo "rc=${PIPESTATUS[0]}"
dmesg 2>/dev/null | tail -3
