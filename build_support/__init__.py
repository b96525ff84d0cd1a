"""Build-time logic for setup.py: the toolkit search and the build configuration.

Kept out of setup.py so it can be unit-tested without compiling anything, and
shipped in the sdist so `pip install fusedops-*.tar.gz` builds the same way.
"""
