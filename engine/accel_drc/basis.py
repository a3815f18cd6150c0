"""Where each input of a finding comes from, and the one place that decides what a finding may claim.

A finding is only as good as its weakest input.  Checks record, per input, one of five bases in
``evidence["basis"]``:

* ``measured``: read off the board's geometry (a stub length, a routed width and gap);
* ``declared``: written by the designer (board file stack-up, IPC-2581, accel-drc.yaml, ``--class``);
* ``library``: a named material's datasheet value from ``rules/materials.yaml``;
* ``default``: a value nobody stated (a class default, KiCad's auto-generated FR4 stack-up, a
  tool default such as a placeholder VRM);
* ``assumed``: a guess (an unknown PCIe generation taken as Gen4, an auto-detected board class,
  a rail recognised as the core rail).

Checks report what their numbers say (a stub over the limit is a ``violation``); :func:`settle`
then turns every violation whose outcome rests on a ``default`` or ``assumed`` input into
``cannot_verify``, keeping the computed number as a *conditional* and saying what to declare.
That is the whole rule, in one place, so no check can forget it: a FAIL rests only on measured,
declared or library facts.

Where a check could evaluate the other values a guessed input might take (the other PCIe
generations, the other board classes), it lists them in ``evidence["candidates"]``
(``{"pcie3": "pass", "pcie4": "fail"}``) and ``evidence["candidates_of"]`` (the input they are
values of, e.g. ``"signal"`` or ``"class"``).  If the finding fails for *every* candidate, its
outcome does not depend on that guess and the guess no longer weakens it.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .results import Finding, Status


class Basis(str, enum.Enum):
    """Where an input's value came from (see the module docstring)."""

    MEASURED = "measured"
    DECLARED = "declared"
    LIBRARY = "library"
    DEFAULT = "default"
    ASSUMED = "assumed"


#: bases a FAIL may rest on
FACTS = frozenset({Basis.MEASURED, Basis.DECLARED, Basis.LIBRARY})
#: bases that make a violation conditional
WEAK = frozenset({Basis.DEFAULT, Basis.ASSUMED})

#: what a user declares to turn a weak input into a fact, for inputs whose check gave no hint
_DECLARE = {
    "class": "declare the board class (accel-drc.yaml `class:` or `--class`)",
    "signal": "declare the net's signal type (accel-drc.yaml signals: <type>: [...])",
    "generation": "declare the net's signal type (accel-drc.yaml signals: <type>: [...])",
    "stackup": "declare your fab's stack-up (KiCad Board Setup > Physical Stackup, or IPC-2581)",
    # the stack-up values (analysis/stackup.py owns them): each is declarable in accel-drc.yaml
    "mask_er": "declare the soldermask εr (accel-drc.yaml stackup: materials: F.Mask: "
    "{epsilon_r: <εr>}, or KiCad Board Setup > Physical Stackup)",
    "epsilon_r": "declare the dielectrics' εr (accel-drc.yaml stackup: materials: <dielectric>: "
    "{epsilon_r: <εr>}, or KiCad Board Setup > Physical Stackup)",
    "h": "declare the dielectric thicknesses (accel-drc.yaml stackup: materials: <dielectric>: "
    "{thickness_mm: <mm>}, or KiCad Board Setup > Physical Stackup)",
    "t": "declare the copper thickness (accel-drc.yaml stackup: copper: <layer>: "
    "{thickness_um: <µm>}, or KiCad Board Setup > Physical Stackup)",
    # lengths and values a check derives from declarable ones: the hint names what to write
    "stub_mm": "declare your fab's stack-up heights, through which the stub is measured "
    "(KiCad Board Setup > Physical Stackup, or accel-drc.yaml stackup: materials: "
    "<dielectric>: {thickness_mm: <mm>})",
    "plating": "declare the barrel plating (accel-drc.yaml stackup: via_plating_um: <µm>)",
    "via_plating": "declare the barrel plating (accel-drc.yaml stackup: via_plating_um: <µm>)",
    "die_delay": "declare the package (pad-to-die) delays (accel-drc.yaml package_delays: "
    "<ref>: {pins_ps: {<pad>: <ps>}} or {delays: matched}, or the pads' die delay in KiCad 10)",
}


def normalise(basis: Mapping[str, Any] | None) -> dict[str, str]:
    """``{input: basis}`` with every value one of the five names; an unknown name is refused
    (a typo in a check must not read as a fact)."""
    out: dict[str, str] = {}
    for k, v in (basis or {}).items():
        out[str(k)] = Basis(v.value if isinstance(v, Basis) else str(v)).value
    return out


def weak_inputs(basis: Mapping[str, str]) -> list[str]:
    """The inputs whose basis is ``default`` or ``assumed``, in the order the check gave them."""
    return [k for k, v in basis.items() if Basis(v) in WEAK]


def candidate_sets(evidence: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``{input: {value: "pass" | "fail"}}`` from ``candidates``/``candidates_of`` (a check's own,
    e.g. the PCIe generations) and ``class_candidates`` (the pipeline's, the board classes)."""
    out: dict[str, Mapping[str, Any]] = {}
    cands, of = evidence.get("candidates"), evidence.get("candidates_of") or "signal"
    if isinstance(cands, Mapping) and cands:
        out[str(of)] = cands
    cls = evidence.get("class_candidates")
    if isinstance(cls, Mapping) and cls:
        out["class"] = cls
    return out


def _robust_to(evidence: Mapping[str, Any]) -> list[str]:
    """The inputs for which every candidate value fails too (the guess does not change the outcome)."""
    return [
        k for k, c in candidate_sets(evidence).items() if all(str(v) == "fail" for v in c.values())
    ]


def flips(evidence: Mapping[str, Any]) -> str:
    """ "fails pcie4, pcie5; passes pcie3" from the candidates (empty if none)."""
    parts = []
    for _, cands in candidate_sets(evidence).items():
        fails = [str(k) for k, v in cands.items() if str(v) == "fail"]
        passes = [str(k) for k, v in cands.items() if str(v) == "pass"]
        if fails:
            parts.append("fails " + ", ".join(fails))
        if passes:
            parts.append("passes " + ", ".join(passes))
    return "; ".join(parts)


def describe(basis: Mapping[str, str], robust: Iterable[str] = ()) -> str:
    """``measured: stub; library: εr; assumed: signal`` — the basis as a reader scans it; an
    input the outcome does not depend on reads ``assumed: class (fails for every class)``."""
    robust = set(robust)
    groups: dict[str, list[str]] = {}
    for k, v in basis.items():
        groups.setdefault(v, []).append(f"{k} (fails for every {k})" if k in robust else k)
    order = [b.value for b in Basis]
    return "; ".join(f"{b}: {', '.join(groups[b])}" for b in order if b in groups)


def _declare_hint(evidence: Mapping[str, Any], weak: Iterable[str]) -> str:
    """What to declare to decide the finding: the check's own hint for its inputs, the class
    hint for the class, a generic one for anything else."""
    hints: list[str] = []
    own = evidence.get("declare")
    for k in weak:
        h = _DECLARE["class"] if k == "class" else (str(own) if own else None)
        h = h or _DECLARE.get(k) or f"declare {k}"
        if h not in hints:
            hints.append(h)
    return "; ".join(hints)


_NAMES = frozenset(b.value for b in Basis)
_WEAK_NAMES = frozenset(b.value for b in WEAK)


def _normalised(basis: Mapping[str, Any]) -> dict[str, str]:
    """:func:`normalise` with the common case (already one of the five names) checked by a set
    look-up instead of an enum construction: ``settle_all`` sees 10k findings on a large board."""
    out: dict[str, str] = {}
    for k, v in basis.items():
        if isinstance(v, Basis):
            name = v.value
        else:
            name = str(v)
            if name not in _NAMES:
                name = Basis(name).value  # refuses an unknown name, as normalise
        out[str(k)] = name
    return out


@functools.lru_cache(maxsize=4096)
def _described(basis: tuple[tuple[str, str], ...], robust: tuple[str, ...]) -> str:
    """:func:`describe`, memoised: most findings of a rule share one basis."""
    return describe(dict(basis), robust)


def replace_finding(f: Finding, **changes: Any) -> Finding:
    """``dataclasses.replace`` for a :class:`Finding` (no ``__post_init__``, every field set),
    without re-running ``__init__``: a tenth of the cost on 10k findings."""
    if type(f) is not Finding:
        return replace(f, **changes)
    new = object.__new__(Finding)
    new.__dict__.update(f.__dict__)
    new.__dict__.update(changes)
    return new


def settle(f: Finding) -> Finding:
    """The finding as it may be reported: a violation resting on a default or an assumption
    becomes ``cannot_verify`` with its number kept as a conditional; everything else is
    returned with its basis normalised and shown in the message."""
    raw = f.evidence.get("basis")
    if not raw:
        return f
    ev = dict(f.evidence)
    basis = _normalised(raw)
    if not basis:
        return f
    ev["basis"] = basis
    weak = [k for k, v in basis.items() if v in _WEAK_NAMES]
    robust = [k for k in _robust_to(ev) if k in weak] if weak else []
    if robust:
        weak = [k for k in weak if k not in robust]
        ev["robust_to"] = robust  # every value the guess could take fails: a fact all the same
    message = f.message
    status = f.status
    if f.status == Status.VIOLATION and weak:
        status = Status.CANNOT_VERIFY
        declare = _declare_hint(ev, weak)
        flip = flips(ev)
        ev["conditional"] = {
            "outcome": "violation",
            "rests_on": {k: basis[k] for k in weak},
            **({"flips": flip} if flip else {}),
        }
        if declare:
            ev["declare"] = declare
        why = ", ".join(f"{basis[k]} {k}" for k in weak)
        message = (
            f"conditional (rests on {why}): {message}"
            + (f" [{flip}]" if flip else "")
            + (f"; to decide it, {declare}" if declare else "")
        )
    if f.status == Status.WAIVED:
        return replace_finding(f, evidence=ev)
    message = f"{message} [{_described(tuple(basis.items()), tuple(robust))}]"
    return replace_finding(f, status=status, message=message, evidence=ev)


def settle_all(findings: Iterable[Finding]) -> list[Finding]:
    return [settle(f) for f in findings]
