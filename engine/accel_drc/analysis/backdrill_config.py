"""The backdrills the project config declares: which ``backdrill:`` entry (matched by net class,
signal type or net name, whole-name regexes, with ``except_net``) applies to each net, the first
match winning, as the :class:`Backdrill` the via table applies to that net's vias."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..config import BackdrillSpec
from ..model import Backdrill, Board

if TYPE_CHECKING:
    from .signals import SignalAssignment


# ---------------------------------------------------------------------------------------------
# backdrill from the config
# ---------------------------------------------------------------------------------------------


def _fullmatch(pattern: str, text: str) -> bool:
    from ..hostile import fullmatch

    try:
        return fullmatch(pattern, text)
    except re.error:
        return pattern == text


def config_backdrills(
    board: Board,
    specs: Sequence[BackdrillSpec],
    net_signal: Mapping[int, SignalAssignment] | None = None,
) -> tuple[dict[int, Backdrill], list[str]]:
    """Net index -> Backdrill from the config ``backdrill:`` list (first matching entry wins).

    ``match`` may name a ``net_class`` (KiCad net class, regex), a ``signal`` type (regex on the
    signal id) or a ``net`` (regex on the net name); several keys must all match.  Each regex
    matches the *whole* name (``re.fullmatch``, like every config regex: ``PCIE_TX.*``, not
    ``^PCIE_TX``); an entry that matches no net is reported by the pipeline
    (``config.unmatched``, :func:`accel_drc.config_audit.unmatched_entries`).  ``except_net`` (regex
    on the net name, whole-name match) leaves nets out of an entry, e.g. the one pair a design
    does not backdrill, without a negative look-ahead in ``match``.
    """
    out: dict[int, Backdrill] = {}
    notes: list[str] = []
    for k, spec in enumerate(specs or ()):
        match = spec.match
        side = spec.side
        if side not in ("top", "bottom"):
            notes.append(f"backdrill[{k}]: side {side!r} is not top or bottom; ignored")
            continue
        mnc_name = spec.must_not_cut
        mnc = None
        if mnc_name is not None:
            mnc = board.layer_index(str(mnc_name))
            if mnc is None:
                notes.append(
                    f"backdrill[{k}]: must_not_cut layer {mnc_name!r} is not a copper layer "
                    "of this board; the deepest connected layer is used instead"
                )
        residual = spec.residual_stub_mm
        drill = Backdrill(
            side=side,
            must_not_cut=mnc,
            residual_stub_mm=None if residual is None else float(residual),
            drill_mm=spec.drill_mm,
            source="config",
        )
        want_class = match.net_class
        want_signal = match.signal
        want_net = match.net
        except_net = spec.except_net
        if want_class is None and want_signal is None and want_net is None:
            notes.append(f"backdrill[{k}]: empty match; ignored")
            continue
        for idx, name in enumerate(board.nets):
            if idx == 0 or not name or idx in out:
                continue
            if want_net is not None and not _fullmatch(str(want_net), name):
                continue
            if except_net is not None and _fullmatch(str(except_net), name):
                continue
            if want_class is not None and not _fullmatch(
                str(want_class), board.net_classes.class_of(name)
            ):
                continue
            if want_signal is not None:
                got = (net_signal or {}).get(idx)
                if got is None or not _fullmatch(str(want_signal), got.signal):
                    continue
            out[idx] = drill
    return out, notes
