"""The version of simpler (read by pyproject.toml and by CMake's project())."""
__version__ = "0.1.0"
