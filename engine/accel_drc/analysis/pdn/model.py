"""PDN impedance model: |Z(f)| of a rail and the inputs of its verdict.

The model is the usual lumped one (VRM, bulk and MLCC banks, plane pair), everything in parallel
at one node:

    VRM (R + jωL)  ∥  each capacitor (ESR + jωESL + 1/jωC)  ∥  plane pairs (jωC_plane)

No spreading inductance and no package: the result is a *lower bound* on what the die sees, so
a rail over target here is over target for real, while a rail under target still needs a field
solver for sign-off (said in docs/geometry.md).

Units: Hz, Ω, F, H; the sweep is log-spaced, 40 points a decade (:func:`sweep`).

Which target a rail is held to (issue 19): the class pack's target is the *accelerator core
rail's* (0.7–0.8 V at hundreds of amperes), so it applies only to a rail declared ``role: core``
or recognised as the core (:func:`~.rails.recognise_core`, basis ``assumed``).  Any other rail
is judged against its own V·ripple/ΔI (or ``target_ohm``) when the config declares it, else it
has no target (:attr:`RailResult.need_load`).  A VRM taken from the pack is a placeholder (basis
``default``); so are the capacitors' ESL/ESR from ``rules/capacitors.yaml`` and a plane
dielectric of KiCad's untouched stack-up (basis ``default`` of the ``network_model``, whose
corners are evaluated: :data:`_CORNERS`, :data:`_PLANE_CORNER`).

Limits: the verdict covers the class band only up to :data:`MODEL_MAX_HZ` (20 MHz), where a
lumped board model stops meaning much: above it the package's capacitors, the die capacitance
and the plane spreading inductance set |Z|.

References: target impedance V·ripple/ΔI: Smith et al. 1999 (``smith1999``); board decoupling
is designed for roughly 100 kHz to 10–20 MHz: AMD UG583 / UG584 (``amd-ug583``, ``amd-ug584``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .rails import CapGroup, Rail, _si

# ---------------------------------------------------------------------------------------------
# impedance
# ---------------------------------------------------------------------------------------------


def sweep(f_lo: float = 1e4, f_hi: float = 1e9, per_decade: int = 40) -> np.ndarray:
    """Log-spaced frequencies, both ends included."""
    n = int(round(math.log10(f_hi / f_lo) * per_decade)) + 1
    return np.logspace(math.log10(f_lo), math.log10(f_hi), max(n, 2))


def cap_impedance(f: np.ndarray, c: float, esl: float, esr: float) -> np.ndarray:
    """Series R-L-C: ESR + jωL + 1/(jωC)."""
    w = 2 * np.pi * np.asarray(f, dtype=float)
    return esr + 1j * w * esl + 1.0 / (1j * w * c)


def branch_admittances(
    f: np.ndarray,
    groups: Sequence[CapGroup],
    plane_c: float | None,
    vrm: Mapping[str, float] | None,
) -> list[tuple[str, np.ndarray]]:
    """(label, Y(f)) of each parallel branch: VRM, each capacitor group, the planes."""
    w = 2 * np.pi * np.asarray(f, dtype=float)
    out: list[tuple[str, np.ndarray]] = []
    if vrm is not None:
        r, lh = float(vrm.get("r_ohm", 0.0)), float(vrm.get("l_h", 0.0))
        z = r + 1j * w * lh
        if np.all(np.abs(z) > 0):
            out.append((f"VRM (R {_si(r, 'Ω')}, L {_si(lh, 'H')})", 1.0 / z))
    for g in groups:
        out.append((f"decaps {g.label}", g.count / cap_impedance(f, g.value_f, g.esl_h, g.esr_ohm)))
    if plane_c:
        out.append((f"plane pairs ({_si(plane_c, 'F')})", 1j * w * plane_c))
    return out


def impedance(
    f: np.ndarray,
    groups: Sequence[CapGroup],
    plane_c: float | None,
    vrm: Mapping[str, float] | None,
) -> np.ndarray:
    """|Z(f)| of VRM ∥ capacitor groups ∥ plane capacitance (inf where nothing conducts)."""
    branches = branch_admittances(f, groups, plane_c, vrm)
    y = np.zeros(len(f), complex)
    for _, yb in branches:
        y = y + yb
    with np.errstate(divide="ignore"):
        return np.abs(1.0 / y)


#: where a board-level lumped model stops meaning much (Hz).  Board decoupling is designed for
#: "roughly 100 kHz and 10–20 MHz" (AMD UG583 / UG584, PCB decoupling capacitors); above that
#: the package's own capacitors, the die capacitance and the plane spreading inductance between
#: the capacitors and the balls (none of them in this model) set the impedance the die sees.
MODEL_MAX_HZ = 2.0e7
#: corners of the default decoupling model: ESL × 0.5 is the low end of the typical ranges in rules/capacitors.yaml
#: (body 0.75 × the midpoint, mounting 0.2 nH instead of 0.6 nH); ESR × 0.55 / × 1.45 the low and
#: high ends of its ESR ranges; a default plane dielectric × 3 in capacitance (a thin prepreg
#: where KiCad's default spreads the board thickness evenly)
_CORNERS = (
    ("low ESL + low ESR", 0.5, 0.55),
    ("low ESL + high ESR", 0.5, 1.45),
)
_PLANE_CORNER = 3.0


@dataclass(frozen=True)
class OverBand:
    """A stretch of the judged band where |Z| is over target, and what sets it at its peak."""

    f_lo_hz: float
    f_hi_hz: float
    peak_f_hz: float
    peak_z_ohm: float
    dominant: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "f_lo_hz": self.f_lo_hz,
            "f_hi_hz": self.f_hi_hz,
            "peak_f_hz": self.peak_f_hz,
            "peak_z_ohm": self.peak_z_ohm,
            "dominant": self.dominant,
        }


@dataclass(frozen=True, eq=False)
class RailResult:
    """A rail evaluated with the class defaults filled in."""

    rail: Rail
    f_hz: np.ndarray
    z_ohm: np.ndarray
    target_ohm: float | None
    target_source: (
        str  # "config target_ohm" | "V·ripple/ΔI (config)" | "class target_ohm (core rail)"
    )
    vrm: Mapping[str, float] | None
    vrm_source: str  # config | class defaults | none
    f_min_hz: float
    f_max_hz: float  # upper end of the band judged: the class band cut at the model's limit
    worst_f_hz: float | None = None
    worst_z_ohm: float | None = None
    dominant: str = ""
    missing: tuple[str, ...] = ()  # what must be declared before |Z(f)| can be computed
    assumed: tuple[str, ...] = field(default_factory=tuple)  # parameters taken from the class
    #: the class band as the pack gives it (DC–100 MHz) and where the lumped model stops
    band_max_hz: float = 1e8
    model_max_hz: float = MODEL_MAX_HZ
    #: {input: basis} (accel_drc.basis) of everything the verdict uses
    basis: Mapping[str, str] = field(default_factory=dict)
    #: a rail that is not the core rail and declares no load of its own: what to declare
    need_load: tuple[str, ...] = ()
    over_bands: tuple[OverBand, ...] = ()
    #: pass/fail of the verdict at the corners of the default network model (ESL, ESR, planes)
    candidates: Mapping[str, str] = field(default_factory=dict)

    @property
    def over(self) -> bool:
        return (
            not self.missing
            and self.target_ohm is not None
            and self.worst_z_ohm is not None
            and self.worst_z_ohm > self.target_ohm
        )


def _scaled_groups(rail: Rail, esl_k: float, esr_k: float) -> tuple[CapGroup, ...]:
    """The rail's capacitor groups with the *default* (unconfirmed) models scaled; parts whose
    model the project declared keep it."""
    acc: dict[tuple[float, str | None, float, float], list[str]] = {}
    for c in rail.decaps:
        esl, esr = (c.esl_h * esl_k, c.esr_ohm * esr_k) if c.unconfirmed else (c.esl_h, c.esr_ohm)
        acc.setdefault((c.value_f, c.package, esl, esr), []).append(c.ref)
    return tuple(
        CapGroup(v, p, esl, r, tuple(refs))
        for (v, p, esl, r), refs in sorted(acc.items(), key=lambda kv: -kv[0][0])
    )


def _worst(freqs: np.ndarray, z: np.ndarray, band: np.ndarray) -> tuple[float | None, float | None]:
    if not band.any() or not np.isfinite(z[band]).any():
        return None, None
    zb = np.where(band, z, -np.inf)
    k = int(np.argmax(zb))
    return float(freqs[k]), float(z[k])


def evaluate(
    rail: Rail, params: Mapping[str, Any] | None = None, per_decade: int = 40
) -> RailResult:
    """|Z(f)| of ``rail`` and its verdict inputs, each with its basis.

    The target: the rail's own ``target_ohm``, else its own V·ripple/ΔI (all three declared),
    else — for the core rail only (``role: core`` declared, or recognised) — the class target
    (or V·ripple/ΔI with the class defaults filling what the rail leaves out).  Any other rail
    without its own load has no target: ``need_load`` says what to declare.  The band judged
    is the class band cut at ``model_max_hz`` (the lumped model's limit, :data:`MODEL_MAX_HZ`)."""
    p = dict(params or {})
    f_lo = 1e4
    f_hi = float(p.get("sweep_max_hz") or 1e9)
    f_min = float(p.get("f_min_hz") or 1e4)
    band_max = float(p.get("f_max_hz") or 1e8)
    model_max = float(p.get("model_max_hz") or MODEL_MAX_HZ)
    f_max = min(band_max, model_max)
    freqs = sweep(min(f_lo, f_min), max(f_hi, band_max), per_decade)
    assumed: list[str] = []
    missing: list[str] = []
    need: list[str] = []
    basis: dict[str, str] = {}

    own = (rail.voltage, rail.ripple_pct, rail.transient_a)
    own_keys = ("voltage", "ripple_pct", "transient_a")
    own_declared = rail.source == "config" and any(
        x is not None for x in (rail.ripple_pct, rail.transient_a)
    )
    target = rail.target_ohm
    t_src = "config target_ohm"
    if target is not None:
        basis["target"] = "declared"
    elif all(x is not None for x in own) and rail.transient_a:
        v, rip, di = own
        target = float(v) * float(rip) / 100.0 / float(di)  # type: ignore[arg-type]
        t_src = "V·ripple/ΔI (config)"
        basis.update(
            {"voltage": rail.voltage_basis or "declared", "ripple_pct": "declared",
             "transient_a": "declared"}
        )  # fmt: skip
    elif rail.role == "core":
        basis["rail_role"] = rail.role_basis or "declared"
        if own_declared:
            # the core rail gives part of V·ripple/ΔI: the class defaults fill the rest, visibly
            filled = []
            for val, key, dkey in zip(
                own, own_keys, ("default_voltage", "default_ripple_pct", "default_transient_a")
            ):
                if val is None and p.get(dkey) is not None:
                    val = float(p[dkey])
                    assumed.append(dkey)
                    basis[key] = "default"
                elif val is not None:
                    basis[key] = (
                        (rail.voltage_basis or "declared") if key == "voltage" else "declared"
                    )
                filled.append(val)
            v, rip, di = filled
            if v is not None and rip is not None and di:
                target = v * rip / 100.0 / di
                t_src = "V·ripple/ΔI (config + class)"
        if target is None and p.get("target_ohm") is not None:
            target = float(p["target_ohm"])
            t_src = "class target_ohm (core rail)"
            assumed.append("target_ohm")
        if target is None:
            missing.append("target_ohm (or voltage, ripple_pct and transient_a) for the rail")
    else:
        # not the accelerator core: the class target (a core rail's) does not apply
        lacking = [k for k, x in zip(own_keys, own) if x is None]
        need.append(
            f"{', '.join(lacking)} of rail {rail.name} (its own V·ripple/ΔI), or role: core if "
            "it is the accelerator's core rail"
            if lacking
            else f"transient_a of rail {rail.name} (a load step above 0 A)"
        )

    vrm = rail.vrm
    v_src = "config"
    if vrm is not None:
        basis["vrm"] = "declared"
    elif isinstance(p.get("vrm"), Mapping):
        vrm = {"r_ohm": float(p["vrm"].get("r_ohm", 0.0)), "l_h": float(p["vrm"].get("l_h", 0.0))}
        v_src = "class defaults"
        assumed.append("vrm")
        basis["vrm"] = "default"  # the pack's placeholder, not this board's regulator
    else:
        v_src = "none"
        missing.append("vrm: {r_ohm, l_h} for the rail (accel-drc.yaml rails:)")
    if not rail.net_ids:
        missing.append("nets: patterns that match the rail's nets")
    if rail.plane_unknown:
        missing.append("thickness and εr of the dielectrics between the rail's plane pairs")

    groups = rail.groups()
    plane_c = rail.plane_capacitance_f
    if rail.plane_pairs:
        basis["plane_area"] = "measured"
    if rail.decaps:
        basis["decaps"] = "measured"
    decap_default = any(c.unconfirmed for c in rail.decaps)
    plane_default = bool(rail.plane_pairs) and rail.plane_dielectric_basis == "default"
    if rail.decaps or rail.plane_pairs:
        # ESL/ESR of the capacitors (rules/capacitors.yaml typicals unless declared) and the
        # plane dielectric (KiCad's default stack-up unless declared): one network model
        basis["network_model"] = "default" if decap_default or plane_default else "declared"

    z = impedance(freqs, groups, plane_c, vrm)
    band = (freqs >= f_min * (1 - 1e-9)) & (freqs <= f_max * (1 + 1e-9))
    worst_f, worst_z = _worst(freqs, z, band)
    dominant = ""
    if worst_f is not None:
        dominant = _dominant(np.array([worst_f]), groups, plane_c, vrm)
    elif not groups and not plane_c and vrm is None:
        missing.append("decoupling capacitors, planes or a VRM model: nothing on the rail")

    over_bands: list[OverBand] = []
    candidates: dict[str, str] = {}
    if target is not None and worst_z is not None and not missing:
        over = band & np.isfinite(z) & (z > target)
        k = 0
        n = len(freqs)
        while k < n:
            if not over[k]:
                k += 1
                continue
            j = k
            while j + 1 < n and over[j + 1]:
                j += 1
            seg = slice(k, j + 1)
            pk = k + int(np.argmax(z[seg]))
            over_bands.append(
                OverBand(
                    float(freqs[k]),
                    float(freqs[j]),
                    float(freqs[pk]),
                    float(z[pk]),
                    _dominant(np.array([freqs[pk]]), groups, plane_c, vrm),
                )
            )
            k = j + 1
        if basis.get("network_model") == "default":
            candidates["typical"] = "fail" if worst_z > target else "pass"
            pk = _PLANE_CORNER if plane_default else 1.0
            for label, esl_k, esr_k in _CORNERS:
                g2 = _scaled_groups(rail, esl_k if decap_default else 1.0,
                                    esr_k if decap_default else 1.0)  # fmt: skip
                z2 = impedance(freqs, g2, None if plane_c is None else plane_c * pk, vrm)
                _, w2 = _worst(freqs, z2, band)
                name = label if decap_default else "plane C × 3"
                if plane_default and decap_default:
                    name += " + plane C × 3"
                candidates[name] = "fail" if w2 is not None and w2 > target else "pass"
                if not decap_default:
                    break
    return RailResult(
        rail=rail,
        f_hz=freqs,
        z_ohm=z,
        target_ohm=target,
        target_source=t_src,
        vrm=vrm,
        vrm_source=v_src,
        f_min_hz=f_min,
        f_max_hz=f_max,
        worst_f_hz=worst_f,
        worst_z_ohm=worst_z,
        dominant=dominant,
        missing=tuple(dict.fromkeys(missing)),
        assumed=tuple(assumed),
        band_max_hz=band_max,
        model_max_hz=model_max,
        basis=basis,
        need_load=tuple(need),
        over_bands=tuple(over_bands),
        candidates=candidates,
    )


def _dominant(
    f: np.ndarray,
    groups: Sequence[CapGroup],
    plane_c: float | None,
    vrm: Mapping[str, float] | None,
) -> str:
    """The branch that sets |Z| at ``f``: the one carrying the largest admittance; at an
    anti-resonance (the two largest of opposite reactance and within 3× of each other) both."""
    br = [(label, complex(y[0])) for label, y in branch_admittances(f, groups, plane_c, vrm)]
    if not br:
        return ""
    br.sort(key=lambda t: -abs(t[1]))
    first = br[0]
    if len(br) > 1:
        second = br[1]
        if (
            first[1].imag * second[1].imag < 0
            and abs(second[1]) * 3 >= abs(first[1])
            and abs(first[1].imag) > abs(first[1].real)
        ):
            return f"anti-resonance of {first[0]} with {second[0]}"
    return first[0]


def model_band_text(res: RailResult) -> str:
    """The band the verdict covers and why it stops there, as the finding and the plot say it."""
    lo, hi = _si(res.f_min_hz, "Hz"), _si(res.f_max_hz, "Hz")
    if res.band_max_hz > res.f_max_hz:
        return (
            f"judged {lo}–{hi}: a board-level lumped model (VRM, capacitors, planes at one node) "
            f"means something up to about {_si(res.model_max_hz, 'Hz')}; above it, up to the "
            f"class band's {_si(res.band_max_hz, 'Hz')}, the package capacitors, the die "
            "capacitance and the plane spreading inductance to the balls set |Z| (board "
            "decoupling is designed for roughly 100 kHz to 10–20 MHz: AMD UG583/UG584): that "
            "part needs the package model or a field solver"
        )
    return (
        f"judged {lo}–{hi} (inside the lumped model's range, up to {_si(res.model_max_hz, 'Hz')})"
    )


def remedy(res: RailResult) -> str:
    """What would bring the rail under target, band by band: the failing stretch, what sets
    |Z| at its peak, and the capacitance (at the band's low end) and inductance (at its high
    end) a network under target needs there, beside what the rail has now."""
    t = res.target_ohm
    if not res.over_bands or not t:
        return ""
    rail = res.rail
    c_now = sum(c.value_f for c in rail.decaps) + (rail.plane_capacitance_f or 0.0)
    inv_l = sum(1.0 / c.esl_h for c in rail.decaps if c.esl_h > 0)
    l_now = 1.0 / inv_l if inv_l else None
    parts = []
    for b in res.over_bands:
        c_need = 1.0 / (2 * math.pi * b.f_lo_hz * t)
        l_need = t / (2 * math.pi * b.f_hi_hz)
        needs = []
        if c_now < c_need:
            needs.append(
                f"≥ {_si(c_need, 'F')} of capacitance for {_si(b.f_lo_hz, 'Hz')} (the rail has "
                f"{_si(c_now, 'F')})"
            )
        if l_now is None or l_now > l_need:
            needs.append(
                f"≤ {_si(l_need, 'H')} of parallel mounted inductance for "
                f"{_si(b.f_hi_hz, 'Hz')} (its capacitors give {_si(l_now, 'H')})"
            )
        if not needs:
            # enough C and little enough L in total: the peak is a resonance between branches
            needs.append(
                "damping of the resonance: capacitors with their self-resonance in the band "
                "(intermediate values) or more ESR, since total capacitance and mounted "
                "inductance already suffice"
            )
        parts.append(
            f"{_si(b.f_lo_hz, 'Hz')}–{_si(b.f_hi_hz, 'Hz')} (peak {_si(b.peak_z_ohm, 'Ω')} at "
            f"{_si(b.peak_f_hz, 'Hz')}, set by {b.dominant}): under {_si(t, 'Ω')} needs "
            + " and ".join(needs)
        )
    return "; ".join(parts)
