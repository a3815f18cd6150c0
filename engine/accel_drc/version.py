"""The package's version, in one place (``pyproject.toml`` reads it; ``accel_drc.__version__``
re-exports it).  A module of its own, on the lowest floor, so that a writer or the pipeline can
name the version without importing the package's ``__init__`` (which reaches the public API)."""

__version__ = "0.1.0"
