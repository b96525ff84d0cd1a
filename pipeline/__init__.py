"""The fusedops wheel pipeline: one typed model of the build matrix and one build path.

    python -m pipeline matrix [--github] [filters]     the cells (scripts/matrix.py is the same)
    python -m pipeline build [CELL_ID] [--torch ...]    toolchain, compile, repair, gate
    python -m pipeline repair WHEEL -w DIR              auditwheel repair (torch/CUDA excluded)
    python -m pipeline verify WHEEL [--cell CELL_ID]    the verification gate
    python -m pipeline index WHEEL_DIR OUT_DIR          per-variant PEP 503 indexes
                      [--releases-url URL --release TAG=DIR ...]   (every release's wheels)
    python -m pipeline pypi-wheel PART... -o DIR        the one PyPI wheel (a library per family)
    python -m pipeline release collect|rehearse         the release's own steps
    python -m pipeline cibw STEP                        cibuildwheel's hooks (the same functions)

Layout: rules (the facts shared with the installed package) -> matrix (data)
-> cell (one wheel to build, every derived fact a property) -> toolchain ->
build -> repair -> gate -> index / pypi_wheel -> release. nox, cibuildwheel, the
workflows and setup.py (config.py, backend.py) all go through these modules;
nothing downstream re-derives a fact.
"""
