"""The board outline of an IPC-2581 file and the polygon rings every part reads: a
``PolyBegin``/``PolyStepSegment``/``PolyStepCurve`` ring (arcs flattened by the one chord
tolerance), the ``Profile`` rings and the cut-outs flashed on outline layers, each hole once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..geometry import centre_arc_points
from ..model import (
    Outline,
)
from .ipc2581_records import Node


class OutlineReading:
    """The reader's part that reads polygon rings and the outline (mixed into
    :class:`~accel_drc.readers.ipc2581._Reader`, whose state it shares)."""

    def _on_profile(self, elem: Node, parent: str) -> None:
        for sub in elem.iter():
            if sub.tag in ("Polygon", "Cutout"):
                ring = self._ring(sub)
                if len(ring) >= 2:
                    self.profile.append(ring)

    def _ring(self, poly: Node, scale: float | None = None) -> np.ndarray:
        """A PolyBegin/PolyStepSegment/PolyStepCurve ring, arcs flattened by
        :func:`accel_drc.geometry.centre_arc_points` (the one chord tolerance).

        Zone fills are most of the points in a big file, so straight steps (kept as bare
        attribute dicts, see ``_x_start``) are converted by numpy in one go."""
        parts: list[np.ndarray] = []
        xs: list[str | None] = []
        ys: list[str | None] = []

        def flush() -> None:
            if xs:
                try:
                    arr = np.array([xs, ys], dtype=np.float64).T
                except (TypeError, ValueError):
                    raise InputError(
                        self.path, "polygon with a missing or non-numeric x/y", line=poly.line
                    ) from None
                if not np.isfinite(arr).all():
                    raise InputError(self.path, "polygon with a non-finite x/y", line=poly.line)
                arr *= scale if scale is not None else self._scale()
                arr[:, 1] *= -1.0
                parts.append(arr)
                xs.clear()
                ys.clear()

        for step in poly.children:
            if type(step) is dict or step.tag == "PolyBegin":
                xs.append(step.get("x"))
                ys.append(step.get("y"))
            elif step.tag == "PolyStepCurve":
                flush()
                if not parts:
                    continue
                last = parts[-1][-1]
                end = self._xy(step, scale=scale)
                center = self._xy(step, "centerX", "centerY", scale=scale)
                cw = (step.get("clockwise") or "false").lower() == "true"
                start = (float(last[0]), float(last[1]))
                arc = centre_arc_points(start, end, center, increasing=cw)[1:]
                parts.append(np.asarray(arc, dtype=np.float64).reshape(-1, 2))
        flush()
        if not parts:
            return np.zeros((0, 2))
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def _outline(self) -> Outline:
        if not self.profile:
            self.warnings.append("no <Profile>: board outline unknown")
            return Outline()
        allpts = np.vstack(self.profile)  # the box is the profile's: cut-outs lie inside it
        bbox = (
            float(allpts[:, 0].min()),
            float(allpts[:, 1].min()),
            float(allpts[:, 0].max()),
            float(allpts[:, 1].max()),
        )
        flashed = _not_repeated(self.cutouts, self.profile[1:])
        return Outline(rings=tuple(self.profile) + tuple(flashed), bbox=bbox)


_SAME_RING_MM = 0.02


def _ring_boxes(rings: Sequence[np.ndarray]) -> np.ndarray:
    """(n, 4) array of the rings' boxes (xmin, ymin, xmax, ymax); empty rings get NaN."""
    boxes = np.full((len(rings), 4), np.nan)
    for i, ring in enumerate(rings):
        if len(ring):
            boxes[i, :2] = ring.min(axis=0)
            boxes[i, 2:] = ring.max(axis=0)
    return boxes


def _not_repeated(flashed: Sequence[np.ndarray], rings: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The ``flashed`` rings whose bounding box is not that of one of ``rings`` (within
    :data:`_SAME_RING_MM`): one vectorised comparison per flash."""
    if not flashed or not rings:
        return list(flashed)
    boxes = _ring_boxes(rings)
    mine = _ring_boxes(flashed)
    return [
        ring
        for ring, box in zip(flashed, mine)
        if not np.any(np.all(np.abs(boxes - box) <= _SAME_RING_MM, axis=1))
    ]
