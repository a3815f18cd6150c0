"""accel-drc: a design-rule checker for the circuit boards that carry AI accelerators."""

from __future__ import annotations

__version__ = "0.1.0"

# the compiled methods of the package's dataclasses (start-up cost, issue 18; accel_drc.dccode)
from . import dccode as _dccode  # noqa: E402

_dccode.install()
