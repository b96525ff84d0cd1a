# The release version, without the local (+cuXYZ) suffix the build adds.
__version__ = "0.1.0"
