"""Synthetic boards and check results for the HTML report tests (and the scale test).

Why hand-built: the report must be tested before (and independently of) the reader and the
check engine, and at sizes (10,000 findings, a training-size board) no small fixture has.
Everything is deterministic (seeded numpy RNG), so sizes and timings are comparable run to run.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from accel_drc.extras import ViaStubSeries
from accel_drc.model import (
    Board,
    CopperLayer,
    Footprint,
    Outline,
    Pad,
    Stackup,
    StackupLayer,
    Tracks,
    Vias,
    Zone,
    copper_layer_name,
)
from accel_drc.results import (
    CheckResult,
    Classification,
    Evidence,
    Finding,
    Rule,
    RuleRun,
    Severity,
    Status,
)

HOSTILE_NET = "</script><img src=x onerror=alert(1)>\"'&\u2028\u2029<!--"
#: the FR4 dielectric of make_board (Df 0.02): laminate_df findings name it in their evidence
LOSSY_DIELECTRIC = "dielectric 4"
HOSTILE_FILE = (
    "/tmp/evil</title>/x<script>alert(2)</script><img src=x onerror=alert(3)>\"'&.kicad_pcb"
)


def make_board(
    layers: int = 8,
    size: tuple[float, float] = (160.0, 100.0),
    n_tracks: int = 4000,
    n_vias: int = 600,
    n_footprints: int = 40,
    zones: bool = True,
    hostile: bool = False,
    seed: int = 1,
) -> Board:
    """A board with an outline, routed tracks on every layer (chained polylines, as KiCad
    writes them), vias, footprints with pads and a plane zone per inner layer."""
    rng = np.random.default_rng(seed)
    w, h = size
    cl = tuple(
        CopperLayer(
            index=i,
            name=copper_layer_name(i, layers),
            user_name=("GND" if i == 1 else copper_layer_name(i, layers)),
            kind="power" if i in (1, layers - 2) else "signal",
        )
        for i in range(layers)
    )
    # stack-up: mask, Cu, dielectric alternating core/prepreg, ..., mask
    st: list[StackupLayer] = [StackupLayer("F.Mask", "soldermask", 0.01)]
    for i in range(layers):
        st.append(
            StackupLayer(
                copper_layer_name(i, layers),
                "copper",
                0.035 if i in (0, layers - 1) else 0.0175 * (4 if i == 1 else 2),
                copper_index=i,
                foil=None if i == 2 else "HVLP",
            )
        )
        if i < layers - 1:
            kind = "core" if i % 2 else "prepreg"
            st.append(
                StackupLayer(
                    f"dielectric {i + 1}",
                    kind,
                    0.1 if kind == "prepreg" else 0.2,
                    material="Megtron 6" if i != 3 else "FR4",
                    epsilon_r=3.4 if i != 3 else 4.5,
                    loss_tangent=0.004 if i != 3 else 0.02,
                )
            )
    st.append(StackupLayer("B.Mask", "soldermask", 0.01))
    stackup = Stackup(layers=tuple(st), finish="ENIG")

    ring = np.array([[0, 0], [w, 0], [w, h], [0, h], [0, 0]], dtype=float)
    outline = Outline(rings=(ring,), bbox=(0.0, 0.0, w, h))

    n_nets = 200
    nets = [""] + [f"/NET_{i}" for i in range(1, n_nets)]
    if hostile:
        nets[1] = HOSTILE_NET
    # tracks: random walks of 8 segments, Manhattan/45°, chained
    per = 8
    walks = max(1, n_tracks // per)
    starts = rng.uniform([5, 5], [w - 5, h - 5], size=(walks, 2))
    steps = rng.choice([-1.0, 0.0, 1.0], size=(walks, per, 2)) * rng.uniform(
        0.5, 4.0, size=(walks, per, 1)
    )
    pts = np.concatenate([starts[:, None, :], starts[:, None, :] + np.cumsum(steps, axis=1)], 1)
    pts = np.clip(pts, 1, [w - 1, h - 1])
    a = pts[:, :-1].reshape(-1, 2)
    b = pts[:, 1:].reshape(-1, 2)
    nseg = len(a)
    lay = np.repeat(rng.integers(0, layers, walks), per).astype(np.int16)
    net = np.repeat(rng.integers(1, n_nets, walks), per).astype(np.int32)
    width = np.repeat(rng.choice([0.1, 0.127, 0.2, 0.25, 0.5], walks), per)
    mid = np.full((nseg, 2), np.nan)
    tracks = Tracks(start=a, end=b, mid=mid, width=width, layer=lay, net=net)

    vpos = rng.uniform([2, 2], [w - 2, h - 2], size=(n_vias, 2))
    vias = Vias(
        pos=vpos,
        drill=np.full(n_vias, 0.2),
        diameter=rng.choice([0.45, 0.6], n_vias),
        start=np.zeros(n_vias, np.int16),
        end=np.full(n_vias, layers - 1, np.int16),
        net=rng.integers(1, n_nets, n_vias).astype(np.int32),
        micro=np.zeros(n_vias, bool),
        layer_count=layers,
    )

    fps = []
    for k in range(n_footprints):
        x, y = float(rng.uniform(10, w - 10)), float(rng.uniform(10, h - 10))
        rot = float(rng.choice([0.0, 90.0, 45.0]))
        pads = []
        for p in range(4):
            th = math.radians(rot)
            u = (p - 1.5) * 1.27
            px, py = x + u * math.cos(th), y - u * math.sin(th)
            pads.append(
                Pad(
                    number=str(p + 1),
                    net=int(rng.integers(1, n_nets)),
                    type="smd",
                    shape="roundrect" if p % 2 else "oval",
                    x=px,
                    y=py,
                    width=0.8,
                    height=1.6,
                    rotation=rot,
                    copper_layers=(0,) if k % 3 else (layers - 1,),
                )
            )
        value = HOSTILE_NET if (hostile and k == 0) else "100n"
        fps.append(
            Footprint(
                f"C{k + 1}", value, "Capacitor_SMD:C_0402", "F.Cu", x, y, rot, pads=tuple(pads)
            )
        )

    zl: list[Zone] = []
    if zones:
        for i in range(1, layers - 1):
            # a plane with a grid of anti-pad holes, written KiCad style (bridged into one ring)
            outer = [(1.0, 1.0), (w - 1, 1.0), (w - 1, h - 1), (1.0, h - 1)]
            ring_pts = list(outer) + [outer[0]]
            for hx in np.linspace(10, w - 10, 12):
                for hy in np.linspace(10, h - 10, 6):
                    circle = [
                        (hx + 1.2 * math.cos(t), hy + 1.2 * math.sin(t))
                        for t in np.linspace(0, -2 * math.pi, 33)
                    ]
                    ring_pts += [circle[0], *circle, outer[0]]
            poly = np.array(ring_pts, dtype=float)
            zl.append(
                Zone(net=2, net_name=nets[2], layers=(i,), outline=poly[:5], filled={i: (poly,)})
            )

    name = HOSTILE_FILE if hostile else "synthetic.kicad_pcb"
    return Board(
        source=name,
        format="kicad_pcb",
        copper_layers=cl,
        stackup=stackup,
        board_thickness_mm=stackup.thickness_mm,
        outline=outline,
        nets=tuple(nets),
        tracks=tracks,
        vias=vias,
        zones=tuple(zl),
        footprints=tuple(fps),
    )


_CHECKS = ("via_stub", "laminate_df", "foil", "impedance", "pdn_impedance", "tg", "copper_weight")


def make_rules() -> list[Rule]:
    rules = []
    for c in _CHECKS:
        for sig in (
            ("nvlink4", "pcie5")
            if c in ("via_stub", "laminate_df", "foil", "impedance")
            else (None,)
        ):
            rid = f"training.{c}" + (f".{sig}" if sig else "")
            rules.append(
                Rule(
                    id=rid,
                    check=c,
                    severity=Severity.ERROR if c != "impedance" else Severity.WARNING,
                    params={"f_min_hz": 1e4, "f_max_hz": 1e8} if c == "pdn_impedance" else {},
                    why=f"why {c}: keep the channel within its loss budget",
                    source="[nextpcb2026] PCB Design Parameter table",
                    pack="training",
                    signal=sig,
                    title=f"{c} for {sig or 'board'}",
                )
            )
    return rules


def make_result(
    board: Board,
    n_findings: int = 40,
    hostile: bool = False,
    seed: int = 2,
    rails: bool = True,
) -> CheckResult:
    """A result with ``n_findings`` findings spread over the board, every status and severity,
    cannot-verify findings that say what to declare, waivers of each state, rails and stubs."""
    rng = np.random.default_rng(seed)
    rules = make_rules()
    (xmin, ymin, xmax, ymax) = board.outline.bbox or (0, 0, 100, 100)
    findings: list[Finding] = []
    for k in range(n_findings):
        rule = rules[k % len(rules)]
        r = k % 10
        status = Status.CANNOT_VERIFY if r == 7 else Status.WAIVED if r == 8 else Status.VIOLATION
        sev = rule.severity if r != 9 else Severity.INFO
        has_pos = rule.check in ("via_stub", "impedance", "pdn_impedance") or k % 4 == 0
        pos = (
            (float(rng.uniform(xmin + 2, xmax - 2)), float(rng.uniform(ymin + 2, ymax - 2)))
            if has_pos
            else None
        )
        pdn = rule.check == "pdn_impedance"
        layer = board.copper_layers[k % board.layer_count].name
        net = board.nets[1 + k % (len(board.nets) - 1)]
        ev: dict[str, Any] = {"stub_mil": round(float(rng.uniform(5, 30)), 2)}
        if status == Status.CANNOT_VERIFY:
            ev["declare"] = f"declare the foil grade of {layer} in accel-drc.yaml (stackup.foil)"
        elif rule.check == "laminate_df":
            # as checks/laminate_df.py reports it: on the copper layer, naming the dielectric
            # whose Df is over the limit (the FR4 layer of make_board)
            ev["dielectric"] = LOSSY_DIELECTRIC
        findings.append(
            Finding(
                rule=rule.id,
                check=rule.check,
                severity=sev,
                status=status,
                message=f"{rule.check} on {net}: {k}",
                measured=round(float(rng.uniform(0.1, 1.0)), 4) * (1e-3 if pdn else 1.0),
                limit=1.5e-4 if pdn else 0.25,
                unit="Ω" if pdn else "mm",
                net=net,
                layer=layer,
                pos=pos,
                items=(f"00000000-0000-0000-0000-{k:012d}",),
                why=rule.why,
                source=rule.source,
                evidence=ev,
                waiver={"reason": "accepted by SI review", "owner": "a.b"}
                if status == Status.WAIVED
                else None,
            )
        )
    extras: dict[str, Any] = {}
    if rails:
        f = np.logspace(4, 9, 120)
        c, esl, esr, lvrm = 2e-3, 40e-12, 0.1e-3, 1e-9
        z = np.abs(
            esr + 1j * 2 * np.pi * f * esl + 1 / (1j * 2 * np.pi * f * c)
        ) + 2 * np.pi * f * lvrm / (1 + (f / 1e5) ** 2)
        extras["rails"] = [
            {
                "name": "VDD_CORE",
                "nets": ["VDD_CORE", "+0V8"],
                "plane_capacitance_f": 2.3e-8,
                "decaps": [{"ref": "C1", "value_f": 1e-5}],
                "target_ohm": 1.5e-4,
                "impedance": [{"f_hz": float(a), "z_ohm": float(b)} for a, b in zip(f, z)],
            }
        ]
    extras["via_stubs"] = {
        "nvlink4": ViaStubSeries(
            stubs_mm=tuple(rng.uniform(0.05, 0.6, 400).round(4).tolist()), limit_mm=0.15
        ),
        "pcie5": ViaStubSeries(
            stubs_mm=tuple(rng.uniform(0.05, 0.3, 200).round(4).tolist()), limit_mm=0.25
        ),
    }
    extras["stackup"] = [
        {
            "name": layer.name,
            "kind": layer.kind,
            "thickness_mm": layer.thickness_mm,
            "material": layer.material,
            "epsilon_r": layer.epsilon_r,
            "loss_tangent": layer.loss_tangent,
            "tg_c": 185 if layer.is_dielectric else None,
            "foil": layer.foil,
            "copper_oz": (round(layer.thickness_mm / 0.035, 2) if layer.is_copper else None),
            "signals": ["nvlink4"] if layer.copper_index in (2, 4) else [],
        }
        for layer in (board.stackup.layers if board.stackup else ())
    ]
    waivers = [
        {
            "state": "applied",
            "rule": rules[0].id,
            "selector": {"net": "/NET_.*"},
            "reason": "SI sign-off",
            "owner": "si-team",
            "expires": "2027-01-01",
            "matched": 3,
        },
        {
            "state": "expired",
            "rule": rules[1].id,
            "selector": {"layer": "In3.Cu"},
            "reason": "old exception",
            "owner": "x",
            "expires": "2025-01-01",
            "matched": 0,
        },
        {
            "state": "stale",
            "rule": "training.tg",
            "selector": {"net": HOSTILE_NET if hostile else "NOPE"},
            "reason": "matches nothing",
            "owner": "y",
            "expires": "2027-06-01",
            "matched": 0,
        },
    ]
    cls = Classification(
        board_class="training",
        confidence=0.82,
        evidence=(
            Evidence(
                "copper layers",
                board.layer_count,
                {"training": 0.3, "edge": -0.4},
                "8 layers",
                "[nextpcb2026] PCB Design Parameter table",
            ),
            Evidence(
                "NVLink nets",
                128,
                {"training": 0.6},
                "NVL*_P/N",
                "[nextpcb2026] PCB Design Parameter table",
            ),
            Evidence("board size", "160 × 100 mm", {"edge": 0.2, "inference": 0.1}),
        ),
        source="config" if hostile else "auto",
        scores={"training": 0.82, "inference": 0.12, "edge": 0.06},
    )
    return CheckResult(
        board_file=board.source,
        board_sha256="ab" * 32,
        classification=cls,
        findings=findings,
        rules=[RuleRun(r, checked=50) for r in rules],
        rule_packs=[{"name": "training", "version": "1.0", "file": "training.yaml"}],
        waivers=waivers,
        extras=extras,
        date="2026-11-22T07:00:00Z",
        tool_version="0.1.0",
    )
