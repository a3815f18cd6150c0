"""accel-drc: a design-rule checker for the circuit boards that carry AI accelerators."""

from __future__ import annotations

__version__ = "0.1.0"
