"""Training, inference or edge: which rule pack a board is held to.

The articles the packs follow (NextPCB 2026, ``[nextpcb2026]`` and ``[nextpcb2026-first]`` in
``rules/references.yaml``) describe the classes by ranges that overlap (a 12-layer board can be a workstation inference card or a big edge carrier) and
name one difference as decisive: NVLink/NVSwitch routing.  So the classifier adds weighted
votes, one piece of evidence each, never a hard cut:

* copper layers and board size, scored against each pack's ``profile`` ranges with a soft
  fall-off outside them (``packs.range_score``);
* NVLink nets and NVSwitch parts (the articles' decisive difference: weighted highest);
* PCIe generation and lane count; plane copper weight; the lowest-loss laminate named;
* accelerator and connector footprints: M.2 keys, mini PCIe and SoM connectors (edge), PCIe edge fingers
  (add-in card: inference), SXM/OAM sockets (training/inference), BGA ball counts.

The confidence is the winner's share of all votes.  A board that is no accelerator board at all
(fewer copper layers than any class has, no lane of a fast interface, no accelerator, module or
memory footprint: :func:`not_accelerator`) is ``general``: the rules every class pack shares
apply, the class-specific ones do not (:func:`accel_drc.packs.general_pack`).  A ``class:`` in the config or ``--class``
overrides the result; the evidence is kept, and the report says who decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .analysis.channels import count_lanes
from .analysis.nets import plane_layers
from .caseless import CaselessPattern
from .packs import CLASSES, GENERAL, range_score
from .results import Classification, Evidence

if TYPE_CHECKING:
    from .analysis import Analysis
    from .model import Board
    from .packs import Library

#: the ``what`` of the evidence that a board is no accelerator board (:func:`not_accelerator`)
NOT_ACCELERATOR = "not an accelerator board"

#: weight of each kind of evidence (NextPCB calls NVLink/NVSwitch the decisive difference)
WEIGHTS = {
    "copper layers": 2.5,
    "board size": 1.5,
    "NVLink nets": 3.0,
    "NVSwitch parts": 4.0,
    "PCIe": 1.0,
    "plane copper": 1.0,
    "laminate": 1.0,
    "footprints": 1.5,
}

#: where each kind of evidence comes from: ``[id]`` of ``rules/references.yaml`` and the place
_NP = "[nextpcb2026] PCB Design Parameter table"
SRC_LAYERS = (
    f"{_NP}, Typical layer count row; [nextpcb2026] Inference Deployment table; "
    "[nextpcb2026-first] Comparison table, PCB Layer Count row"
)
SRC_SIZE = f"{_NP}, Board size row"
SRC_NVLINK = (
    f"{_NP}, NVLink routing layers row; [nextpcb2026] FAQ 'What is the key PCB difference "
    "between a training board and an inference board?'"
)
SRC_NVSWITCH = f"{_NP}, NVSwitch on board row"
SRC_PCIE = (
    "[nextpcb2026] FAQ 'Is PCIe Gen5 required for inference servers?'; Inference Deployment table"
)
SRC_COPPER = (
    f"{_NP}, Copper weight (power planes) row; "
    "[nextpcb2026-first] section 3 Power Delivery Network (PDN)"
)
SRC_LAMINATE = f"{_NP}, Signal layer laminate row"
SRC_FORM = (
    "[nextpcb2026] Workload / Recommended Accelerator / Form Factor table (M.2/SoM edge, PCIe "
    "add-in inference, SXM/OAM training); [nextpcb2026-first] Comparison table, Common Form "
    "Factor row"
)

_M2 = CaselessPattern(
    r"m\.?2[^a-z0-9]?.*key|ngff|\bm\.2\b|m2_(key|socket|connector)", validate=False
)
_MINI_PCIE = CaselessPattern(r"pci_?express_?mini|mini_?pci|\bmpcie\b|minicard", validate=False)
_EDGE_FINGERS = CaselessPattern(r"pci_?express|pcie.*(edge|finger|card)|bus_pci", validate=False)
_SXM_OAM = CaselessPattern(r"\bsxm\d?\b|\boam\b|open.?accelerator", validate=False)
_SOM = CaselessPattern(
    r"so-?dimm|jetson|\bsom\b|b2b.*module|nvidia.*(orin|xavier|nano)", validate=False
)
_NVSWITCH = CaselessPattern(r"nvswitch|nv_?switch", validate=False)
_BGA = CaselessPattern(r"bga", validate=False)


def _footprint_kind(text: str) -> str | None:
    """The form-factor connector a footprint's ``"<library name> <value>"`` names, if any."""
    if _M2.search(text):
        return "M.2"
    if _MINI_PCIE.search(text):
        return "mini PCIe"
    if _EDGE_FINGERS.search(text):
        return "PCIe edge fingers"
    if _SXM_OAM.search(text):
        return "SXM/OAM"
    if _SOM.search(text):
        return "SoM connector"
    return None


def _vote(scores: Mapping[str, float], weight: float) -> dict[str, float]:
    return {c: round(weight * float(scores.get(c, 0.0)), 4) for c in CLASSES}


def classify(board: Board, analysis: Analysis, library: Library | None = None) -> Classification:
    """Classify ``board``; ``analysis`` supplies signal types and planes."""
    lib = library if library is not None else analysis.library
    profiles = {c: lib.packs[c].profile for c in CLASSES}
    ev: list[Evidence] = []

    n = board.layer_count
    w = WEIGHTS["copper layers"]
    ev.append(
        Evidence(
            "copper layers",
            n,
            _vote({c: range_score(n, profiles[c].get("layer_count", []), 4.0) for c in CLASSES}, w),
            note="edge 4-8, inference 8-24, training 20-40+ (overlapping)",
            source=SRC_LAYERS,
        )
    )

    size = board.outline.size_mm
    if size:
        side = max(size)
        w = WEIGHTS["board size"]
        ev.append(
            Evidence(
                "board size",
                f"{size[0]:.1f} × {size[1]:.1f} mm",
                _vote(
                    {
                        c: range_score(side, profiles[c].get("board_side_mm", []), 60.0)
                        for c in CLASSES
                    },
                    w,
                ),
                note=f"longest side {side:.1f} mm; edge 50-150, PCIe card ≈312, UBB 400-600, training 400-700+",
                source=SRC_SIZE,
            )
        )

    nv = [x for x in ("nvlink4", "nvlink5") if analysis.nets_by_signal(x)]
    nv_count = sum(len(analysis.nets_by_signal(x)) for x in ("nvlink4", "nvlink5"))
    w = WEIGHTS["NVLink nets"]
    if nv_count:
        ev.append(
            Evidence(
                "NVLink nets",
                nv_count,
                _vote(
                    {"training": 1.0, "inference": 0.35, "edge": 0.0},
                    w * min(1.0, 0.5 + nv_count / 200),
                ),
                note=f"{', '.join(nv)}: NVLink routing is the decisive training feature (SXM/OAM inference boards carry it too)",
                source=SRC_NVLINK,
            )
        )
    else:
        ev.append(
            Evidence(
                "NVLink nets",
                0,
                _vote({"training": 0.0, "inference": 0.3, "edge": 0.3}, w * 0.5),
                note="no NVLink routing: PCIe add-in and edge boards have none",
                source=SRC_NVLINK,
            )
        )

    fps = list(board.footprints)
    nv_of: dict[str, bool] = {}  # per distinct footprint text (see the footprints below)
    nvswitch = []
    for fp in fps:
        text = f"{fp.value} {fp.name}"
        nv = nv_of.get(text)
        if nv is None:
            nv = nv_of[text] = _NVSWITCH.search(text) is not None
        if nv:
            nvswitch.append(fp.reference)
    if nvswitch:
        ev.append(
            Evidence(
                "NVSwitch parts",
                len(nvswitch),
                _vote({"training": 1.0}, WEIGHTS["NVSwitch parts"]),
                note=f"NVSwitch on board ({', '.join(nvswitch[:5])}): training only",
                source=SRC_NVSWITCH,
            )
        )

    # PCIe generation and lanes
    gens = {}
    assumed = False
    pcie_nets: list[int] = []
    for g in ("pcie1", "pcie2", "pcie3", "pcie4", "pcie5", "pcie6"):
        nets = analysis.nets_by_signal(g)
        if nets:
            gens[g] = len(nets)
            pcie_nets.extend(nets)
            assumed = assumed or any(analysis.net_signal[x].assumption for x in nets)
    if gens:
        top = max(gens, key=lambda g: int(g[-1]))
        # a lane = a TX pair + an RX pair; a pair continued through AC-coupling capacitors
        # under another name (PCIE_PET -> PCIE_PET_AC) is the same channel, counted once
        lanes, _ = count_lanes(board, pcie_nets)
        gen = int(top[-1])
        if gen >= 5:
            scores = {"training": 0.6, "inference": 1.0, "edge": 0.1}
        elif lanes >= 8:
            scores = {"training": 0.3, "inference": 0.8, "edge": 0.3}
        else:
            scores = {"training": 0.0, "inference": 0.4, "edge": 1.0}
        ev.append(
            Evidence(
                "PCIe",
                f"Gen{gen} x{lanes}" + (" (generation assumed)" if assumed else ""),
                _vote(scores, WEIGHTS["PCIe"] * (0.6 if assumed else 1.0)),
                note="Gen5 x16 host links mark data-center inference cards; Gen3/4 x1-x4 edge boards",
                source=SRC_PCIE,
            )
        )

    # plane copper
    planes = plane_layers(board, analysis.zone_fractions, 0.25)
    thick: list[float] = []
    by_oz: dict[float, list[str]] = {}
    if board.stackup is not None:
        th = {sl.copper_index: sl.thickness_mm for sl in board.stackup.copper()}
        for i, nets in planes.items():
            t = th.get(i)
            if not t:
                continue
            thick.append(t)
            what = ", ".join(n for n, _ in nets[:2]) or "typed power"
            by_oz.setdefault(round(t * 1000 / 35.0, 2), []).append(
                f"{board.copper_layers[i].name} ({what})"
            )
    if thick:
        # the heaviest plane votes (heavy core planes mark a training board); the text gives
        # every plane's weight, as copper_weight judges them one by one
        oz = max(thick) * 1000 / 35.0
        lo = min(thick) * 1000 / 35.0
        rng = f"{oz:.2f} oz" if abs(oz - lo) < 0.005 else f"{lo:.2f}–{oz:.2f} oz"
        detail = "; ".join(f"{w:.2f} oz: {', '.join(ls)}" for w, ls in sorted(by_oz.items()))
        ev.append(
            Evidence(
                "plane copper",
                f"{rng} ({detail})",
                _vote(
                    {
                        c: range_score(oz, profiles[c].get("power_copper_oz", []), 0.5)
                        for c in CLASSES
                    },
                    WEIGHTS["plane copper"],
                ),
                note="training 2-3 oz, inference 1-2 oz, edge 1 oz",
                source=SRC_COPPER,
            )
        )

    # laminate: the lowest-loss material named in the stack-up
    if board.stackup is not None:
        order = ["standard", "mid", "low", "very_low", "ultra_low", "extreme_low"]
        best = None
        for d in board.stackup.dielectrics():
            for sl in list(d.sublayers) or [d]:
                m = lib.materials.lookup(sl.material)
                if m is not None and (
                    best is None or order.index(m.loss_class) > order.index(best.loss_class)
                ):
                    best = m
        if best is not None:
            rank = order.index(best.loss_class)
            if rank >= 4:
                scores = {"training": 1.0, "inference": 0.5, "edge": 0.0}
            elif rank >= 2:
                scores = {"training": 0.3, "inference": 1.0, "edge": 0.3}
            else:
                scores = {"training": 0.0, "inference": 0.3, "edge": 1.0}
            ev.append(
                Evidence(
                    "laminate",
                    best.name,
                    _vote(scores, WEIGHTS["laminate"]),
                    note=f"lowest-loss laminate named: {best.loss_class.replace('_', ' ')} loss",
                    source=SRC_LAMINATE,
                )
            )

    # footprints (the patterns are matched once per distinct footprint text: a board repeats a
    # few footprints over thousands of instances)
    kinds: dict[str, list[str]] = {}
    kind_of: dict[str, str | None] = {}
    bga_of: dict[str, bool] = {}
    for fp in fps:
        text = f"{fp.name} {fp.value}"
        kind = kind_of.get(text, "")
        if kind == "":
            kind = kind_of[text] = _footprint_kind(text)
        if kind is not None:
            kinds.setdefault(kind, []).append(fp.reference)
        bga = bga_of.get(fp.name)
        if bga is None:
            bga = bga_of[fp.name] = _BGA.search(fp.name) is not None
        if bga:
            balls = len(fp.pads)
            kinds.setdefault("large BGA (>2000 balls)" if balls > 2000 else "BGA", []).append(
                f"{fp.reference}:{balls}"
            )
    votes = {
        "M.2": {"edge": 1.0, "inference": 0.2},
        "mini PCIe": {"edge": 1.0, "inference": 0.1},
        "SoM connector": {"edge": 1.0},
        "PCIe edge fingers": {"inference": 1.0, "edge": 0.3},
        "SXM/OAM": {"training": 1.0, "inference": 0.6},
        "large BGA (>2000 balls)": {"training": 0.8, "inference": 0.8},
        "BGA": {"edge": 0.4, "inference": 0.2},
    }
    for kind, refs in kinds.items():
        ev.append(
            Evidence(
                "footprints",
                f"{kind}: {', '.join(refs[:4])}" + (" …" if len(refs) > 4 else ""),
                _vote(votes[kind], WEIGHTS["footprints"]),
                note=kind,
                source=SRC_FORM,
            )
        )

    scores = {c: round(sum(e.votes.get(c, 0.0) for e in ev), 4) for c in CLASSES}
    total = sum(scores.values())
    winner = max(CLASSES, key=lambda c: (scores[c], -CLASSES.index(c)))
    conf = scores[winner] / total if total > 0 else 0.0
    general = not_accelerator(
        board, analysis, lib, list(kinds) + (["NVSwitch"] if nvswitch else [])
    )
    if general is not None:
        return Classification(
            board_class=GENERAL,
            confidence=1.0,
            evidence=(general, *ev),
            source="auto",
            scores=scores,
        )
    return Classification(
        board_class=winner,
        confidence=round(conf, 3),
        evidence=tuple(ev),
        source="auto",
        scores=scores,
    )


def fast_interfaces(analysis: Analysis, lib: Library) -> list[str]:
    """The recognised interfaces fast enough for a via stub to matter: the signal types of
    ``rules/signals.yaml`` with a stub limit (``max_stub_mm``) that some net of the board has
    (PCIe, USB 3, DDR/LPDDR memory, MIPI, HDMI, Ethernet SerDes …; not USB 2.0, whose 240 MHz
    Nyquist a stub never reaches).  Sidebands and clocks are never typed, so never counted."""
    return [
        sid
        for sid, st in lib.signals.items()
        if st.max_stub_mm is not None and analysis.nets_by_signal(sid)
    ]


def not_accelerator(
    board: Board, analysis: Analysis, lib: Library, parts: list[str]
) -> Evidence | None:
    """The evidence that ``board`` is no accelerator board at all, or None.

    Every accelerator class the packs describe routes fast serial links or memory over reference
    planes on at least as many copper layers as the smallest class minimum (edge: 4), and carries
    a compute part or a module/card connector.  A board with fewer layers than any class has,
    no lane of an interface fast enough for a via stub to matter (:func:`fast_interfaces`) and no
    accelerator footprint (``parts``: M.2, mini PCIe, card-edge fingers, SXM/OAM, SoM, BGA,
    NVSwitch) is none of the classes; judging it against a class's typical layer count or copper
    weight reports the class, not the board.  Every input is read off the board, so the outcome
    is the same for every board with the same facts (never decided board by board)."""
    fewest = min(
        (float(r["min"]) for c in CLASSES for r in lib.packs[c].profile.get("layer_count", [])),
        default=4.0,
    )
    n = board.layer_count
    if n >= fewest or parts:
        return None
    fast = fast_interfaces(analysis, lib)
    if fast:
        return None
    slow = sorted(sid for sid in lib.signals if analysis.nets_by_signal(sid))
    return Evidence(
        NOT_ACCELERATOR,
        f"{n} copper layer{'s' if n != 1 else ''}; no fast interface"
        + (f" (only {', '.join(slow)})" if slow else "")
        + "; no accelerator, module or memory footprint",
        {},
        note=f"fewer copper layers than any class has (edge: {fewest:g}), no lane of an "
        "interface with a via-stub limit (rules/signals.yaml), no M.2 / mini PCIe / card-edge / "
        "SXM / OAM / SoM / BGA / NVSwitch footprint: the class-specific rules (layer count, Tg, "
        "copper weight, PDN target, fab class) do not apply; declare `class:` or --class to "
        "apply them",
        source=f"{SRC_LAYERS}; {SRC_FORM}; rules/signals.yaml max_stub_mm ([bogatin2015-stub])",
    )


def override(auto: Classification, board_class: str, source: str) -> Classification:
    """The class a user declared (``config`` or ``cli``), keeping the automatic evidence."""
    note = Evidence(
        "override",
        board_class,
        {board_class: 0.0},
        note=f"class set by {'--class' if source == 'cli' else 'class: in accel-drc.yaml'}; "
        f"the classifier said {auto.board_class} ({auto.confidence:.0%})",
        source=source,
    )
    return Classification(
        board_class=board_class,
        confidence=1.0,
        evidence=(note, *auto.evidence),
        source=source,
        scores=auto.scores,
    )


def explain(c: Classification) -> str:
    """One line: the class and the strongest evidence for it."""
    who = {"auto": "classified", "config": "set in accel-drc.yaml", "cli": "set by --class"}[
        c.source
    ]
    if c.board_class == GENERAL:
        why = next((e for e in c.evidence if e.what == NOT_ACCELERATOR), None)
        return f"{GENERAL}: not an accelerator board ({who})" + (f": {why.value}" if why else "")
    top = sorted(c.evidence, key=lambda e: -e.votes.get(c.board_class, 0.0))
    bits = [f"{e.what} {e.value}" for e in top[:3] if e.votes.get(c.board_class, 0.0) > 0]
    return f"{c.board_class} ({who}, confidence {c.confidence:.0%})" + (
        f": {'; '.join(bits)}" if bits else ""
    )
