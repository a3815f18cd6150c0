"""Typed report extras: the plot data a check kind hands the reports (``result.extras[key]``).

A kind's extras hook (``via_stub_extra``, …) returns these; ``report/html.py`` reads them and
nothing else, and the JSON report writes :meth:`to_dict` of each.  One shape per extra, so the
adapter in the report is a reader of fields, not a guesser of dict layouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ViaStubSeries:
    """The stubs of every used via on the nets of one via-stub rule (one signal type): the
    HTML stub histogram, with the rule's limit and the resonance margin."""

    stubs_mm: tuple[float, ...] = ()  # known stubs (mm), one per used via barrel
    limit_mm: float | None = None  # the rule's max_stub_mm
    min_fres_ratio: float | None = None  # the rule's min_fres_ratio (f_res / Nyquist)
    nyquist_hz: float | None = None  # the signal type's Nyquist frequency
    min_f_res_hz: float | None = None  # lowest stub resonance among the vias
    count: int = 0  # used vias looked at (known and unknown stub)
    unknown: int = 0  # vias whose stub could not be computed
    backdrilled: int = 0  # vias with a backdrill (board or config)

    def to_dict(self) -> dict[str, Any]:
        return {
            "stubs_mm": list(self.stubs_mm),
            "limit_mm": self.limit_mm,
            "min_fres_ratio": self.min_fres_ratio,
            "nyquist_hz": self.nyquist_hz,
            "min_f_res_hz": self.min_f_res_hz,
            "count": self.count,
            "unknown": self.unknown,
            "backdrilled": self.backdrilled,
        }
