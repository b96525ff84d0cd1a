# v25 call 5: the extended neighbour test (forward and backward) on 325574c's kernels (h0 = the reverted code)
set -u
mkdir -p /tmp/h0; pip install -q --no-deps --no-index --target /tmp/h0 .device/h0/*.whl 2>/dev/null
PYTHONPATH=/tmp/h0 python -c "import fusedops; print(fusedops.__file__, fusedops.BUILD_INFO[\"git_sha\"])"
PYTHONPATH=/tmp/h0 FUSEDOPS_REQUIRE_GPU=1 timeout 300 python -m pytest -q -p no:cacheprovider tests/ops/test_silu_and_mul.py 2>&1 | tail -5
PYTHONPATH=/tmp/h0 FUSEDOPS_REQUIRE_GPU=1 timeout 200 python -m pytest -q -p no:cacheprovider tests/ops/test_silu_and_mul.py -k "neighbours and cuda" 2>&1 | tail -2
