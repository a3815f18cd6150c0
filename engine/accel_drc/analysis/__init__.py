"""Derived facts about a board, computed once and shared by all checks.

:class:`Analysis` is lazy: each fact is a ``cached_property`` computed by a function in one of
the modules beside this file, the first time a check asks for it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..concurrency import Background
from ..model import Board

if TYPE_CHECKING:  # config imports packs, which imports this package
    from ..config import ProjectConfig
    from ..model import DiffPair
    from ..packs import Library, SignalType
    from .irdrop import RailIR
    from .materials import MaterialLibrary
    from .nets import TrackIndex
    from .pdn.rails import Rail
    from .signals import SignalAssignment, SignalGroup
    from .stackup import StackupBasis
    from .via_stubs import ViaStubs


class Analysis:
    """The lazily derived facts of ``board`` under the project ``config`` (typed; a plain
    mapping is taken as already-valid config data) and the rule data ``library`` (None: the
    bundled ``rules/``, loaded when first asked for).

    Every fact is an attribute declared here (a cached property, or a memo created in
    ``__init__``), computed once and read by the checks; nothing outside sets one.  A test that
    needs a fact to be a given value subclasses this class and overrides the property."""

    def __init__(
        self,
        board: Board,
        config: ProjectConfig | Mapping[str, Any] | None = None,
        library: Library | None = None,
        board_class: str | None = None,
    ) -> None:
        from ..config import as_config

        self.board = board
        self.config: ProjectConfig = as_config(config)
        self._library = library
        #: the class the caller fixed (``inspect --class``; None: the classifier's, when asked)
        self.board_class = board_class
        self._jobs: dict[str, Background] = {}
        #: fact -> its wave (see :meth:`wave`), for the facts :meth:`prefetch` started
        self._waves: dict[str, int] = {}
        #: the memos of the analyses and checks, one per key, each owned by one module:
        #: ``impedance`` (the pair table once built, field-solver and declared-target results:
        #: analysis/impedance/table.py, checks/impedance.py), ``loss`` and ``loss_remedy``
        #: (analysis/loss.py, checks/insertion_loss.py), ``velocity`` and ``die_of_nets``
        #: (analysis/delay.py), ``plane_fills`` (analysis/returnpath.py), ``skew_pad_counts``
        #: (checks/skew.py).  Values derived from the facts, never facts of their own.
        self.memo: dict[str, Any] = {}
        #: the nets the via table is computed for (None: every net; see :meth:`scope_via_table`)
        self.via_nets: frozenset[int] | None = None

    def scope_via_table(self) -> None:
        """Compute the via table for the nets a check can ask about only: the typed nets and
        both nets of every differential pair (what ``via_stub``, ``open_channel`` and the
        insertion-loss via term pass to :meth:`ViaStubs.rows_for_nets`, which refuses any
        other).  Why: every join of the table is within one net, and the rest of a board's
        barrels are its ground and power vias (vme-wren: 305 of 4,374 vias on such nets, and
        no zone; the synthetic training board 4,608 of 206,606), whose zone contacts were
        most of the table's cost.  ``inspect`` keeps the whole table."""
        if "via_stubs" in self._jobs or "via_stubs" in self.__dict__:
            raise RuntimeError("scope_via_table() after the via table was started")
        nets = set(self.net_signal)
        for p in self.diff_pairs:
            nets.update((p.positive, p.negative))
        nets.discard(0)
        self.via_nets = frozenset(nets)

    #: facts that may be computed ahead on a background thread (see :meth:`prefetch`)
    PREFETCHABLE = ("rails", "via_stubs", "pair_table")
    #: the costly facts another fact reads (a check that needs ``irdrop`` waits for the rails)
    FACT_NEEDS: Mapping[str, tuple[str, ...]] = {"irdrop": ("rails",)}
    #: fewest vias for which the via table is worth computing ahead: below it the table costs
    #: less than the thread and the shapely import it would start on a board whose rules may
    #: never read it (fixtures/kicad_versions/kicad9: 2 vias, no rule reads the table, and starting
    #: it anyway cost wall time); vme-wren has 4,374, the synthetic training board 206 k
    VIA_PREFETCH_MIN = 2000
    #: fewest differential pairs for which the pair table is worth computing ahead
    PAIR_PREFETCH_MIN = 200

    def prefetch(self, name: str, after: str | None = None) -> None:
        """Start computing ``name`` (one of :attr:`PREFETCHABLE`) on a background thread; the
        property then returns that thread's result (the same value, computed once).  The PDN
        rails are GEOS-bound (see :mod:`accel_drc.concurrency`), so they overlap the
        classification and the Python-bound checks on the main thread.  So is most of the via
        table (the zone contacts: shapely predicates on the fills; the joins: numpy sorts and
        searches), whose main-thread share is small, while the main thread waited for its zone
        contacts when it was computed on demand.

        ``after``: a fact prefetched already that this one starts behind (its thread waits for
        that one first).  The pipeline queues the pair table behind the via table: run side by
        side they only split the same two cores, the via table (which the main thread waits for
        first) came later, and both tables' temporaries were alive at once."""
        if name not in self.PREFETCHABLE:
            raise ValueError(f"{name!r} cannot be prefetched")
        if name in self._jobs or name in self.__dict__:
            return
        if name == "via_stubs" and self.config.backdrill:
            # the backdrill entries match signal types: assign them here, on the calling
            # thread, so the two threads never compute the assignment side by side
            _ = self.net_signal
        compute = getattr(self, f"_compute_{name}")
        first = self._jobs.get(after) if after is not None else None
        if first is not None:
            ahead = first

            def compute_after() -> Any:
                with contextlib.suppress(BaseException):  # its error goes to its own askers
                    ahead.result()
                return getattr(self, f"_compute_{name}")()

            compute = compute_after
        self._jobs[name] = Background(compute, name)
        self._waves[name] = 1 + (self._waves.get(after, 0) if after is not None else 0)

    def wave(self, needs: tuple[str, ...]) -> int:
        """When facts ``needs`` may be ready: 0 when none of them (nor a fact they read,
        :data:`FACT_NEEDS`) is being computed ahead, else the highest wave of those that are
        (1 for a fact started alone, one more for each fact it was queued ``after``).  The
        pipeline runs a rule in its kind's wave, so the main thread does the rules that wait
        for nothing while the background thread works."""
        out = 0
        for name in needs:
            out = max(out, self._waves.get(name, 0), self.wave(self.FACT_NEEDS.get(name, ())))
        return out

    def settle_prefetched(self) -> None:
        """Wait for every fact started by :meth:`prefetch`, whether or not a check asked for
        it (its error, if any, is left to whoever asks for the fact).

        Why: a prefetched fact no rule of the chosen class reads (the via table of a board
        whose pack runs no via rule) would still be computing when the command ends, and an
        interpreter exit while a daemon thread runs inside GEOS aborts the process
        ("terminate called without an active exception", exit -6, seen on
        fixtures/kicad_versions/kicad8).  The pipeline calls this once the checks are done."""
        for job in list(self._jobs.values()):
            # its error is raised again to whoever asks for the fact
            with contextlib.suppress(BaseException):
                job.result()

    def computed(self, name: str) -> Any:
        """The fact ``name`` if it has been computed already, else None (without computing it:
        a report extra that shows a fact only when a check needed it)."""
        return self.__dict__.get(name)

    def prefetching(self, name: str) -> bool:
        """Whether ``name`` was started by :meth:`prefetch` (and may still be running)."""
        return name in self._jobs

    @functools.cached_property
    def diff_pairs(self) -> tuple[DiffPair, ...]:
        return self.board.diff_pairs

    # -- signal types, routed layers, materials, foil, planes ----------------------------

    @functools.cached_property
    def library(self) -> Library:
        """The validated rules/ data: the one given at construction (the pipeline's), else the
        bundled rules/, loaded on first use."""
        if self._library is not None:
            return self._library
        from ..packs import load_library

        return load_library()

    @functools.cached_property
    def signal_types(self) -> Mapping[str, SignalType]:
        return self.library.signals

    @functools.cached_property
    def net_signal(self) -> dict[int, SignalAssignment]:
        from .signals import assign_signals

        # the sidebands once: the coverage asks for them too (computing them cost 0.07 s)
        return assign_signals(self.board, self.library, self.config, self.net_sideband)

    @functools.cached_property
    def net_sideband(self) -> dict[int, Any]:
        """Net index -> :class:`~accel_drc.analysis.signals.Sideband`: the sideband and control
        nets (SBU, AUX, HPD, CEC, SFP management, …) no data-lane rule judges."""
        from .signals import assign_sidebands

        return assign_sidebands(self.board, self.library, self.config)

    @functools.cached_property
    def _signal_nets(self) -> dict[str, tuple[int, ...]]:
        out: dict[str, list[int]] = {}
        for n, a in sorted(self.net_signal.items()):
            out.setdefault(a.signal, []).append(n)
        return {k: tuple(v) for k, v in out.items()}

    def nets_by_signal(self, sig_id: str) -> tuple[int, ...]:
        """Net indexes carrying signal type ``sig_id``, in net order."""
        return self._signal_nets.get(sig_id, ())

    def signal_groups(self, sig_id: str) -> list[SignalGroup]:
        """Pairs (both halves of the type) and single nets of signal type ``sig_id``."""
        from .signals import signal_groups

        return signal_groups(self.board, self.nets_by_signal(sig_id))

    @functools.cached_property
    def net_layers(self) -> Mapping[int, frozenset[int]]:
        from .nets import net_layers

        return net_layers(self.board)

    @functools.cached_property
    def track_index(self) -> TrackIndex:
        from .nets import TrackIndex

        return TrackIndex(self.board)

    @functools.cached_property
    def materials(self) -> MaterialLibrary:
        return self.library.materials

    @functools.cached_property
    def stackup_basis(self) -> StackupBasis:
        """The basis of every stack-up value (the one owner: ``analysis/stackup.py``)."""
        from .stackup import StackupBasis

        return StackupBasis(self.board.stackup, self.materials)

    @functools.cached_property
    def zone_fractions(self) -> Mapping[int, Mapping[int, float]]:
        from .nets import zone_fractions

        return zone_fractions(self.board)

    @functools.cached_property
    def plane_layers(self) -> Mapping[int, list[tuple[str, float]]]:
        from .nets import plane_layers

        return plane_layers(self.board, self.zone_fractions)

    def foil_of_layer(self, index: int) -> str | None:
        """Declared foil grade id of copper layer ``index``: config ``stackup: foil:`` by
        canonical or user name, then its ``default``, then the board's own (IPC-2581); None if
        nobody declared it."""
        foils = self.library.foils
        declared = self.config.stackup.foil
        layer = self.board.copper_layers[index]
        for key in (layer.name, layer.user_name, "default"):
            if key in declared:
                g = foils.grade(declared[key])
                return g.id if g else None
        if self.board.stackup is not None:
            for sl in self.board.stackup.layers:
                if sl.is_copper and sl.copper_index == index and sl.foil:
                    g = foils.grade(sl.foil)
                    return g.id if g else sl.foil
        return None

    def foil_source(self, index: int) -> str | None:
        """Where :meth:`foil_of_layer` found the grade: ``config``, ``config default``, ``board``."""
        declared = self.config.stackup.foil
        layer = self.board.copper_layers[index]
        if layer.name in declared or layer.user_name in declared:
            return "config"
        if "default" in declared:
            return "config default"
        if self.foil_of_layer(index) is not None:
            return "board"
        return None

    # -- via stubs and PDN rails -----------------------------------------------------------

    @functools.cached_property
    def via_stubs(self) -> ViaStubs:
        job = self._jobs.get("via_stubs")
        return job.result() if job is not None else self._compute_via_stubs()

    def _compute_via_stubs(self) -> ViaStubs:
        from .via_stubs import compute

        net_signal = self.net_signal if self.config.backdrill else None
        return compute(self.board, self.config, net_signal, self.via_nets)

    def _compute_pair_table(self) -> list[Any]:
        """The whole differential-pair table (``analysis.impedance.pair_table``), computed
        ahead: it fills the table's cache, which the impedance and insertion-loss checks read
        (``pair_table`` waits for this job before it looks)."""
        from .impedance.table import _pair_table

        return _pair_table(self, None)

    @functools.cached_property
    def rails(self) -> list[Rail]:
        job = self._jobs.get("rails")
        return job.result() if job is not None else self._compute_rails()

    def _compute_rails(self) -> list[Rail]:
        from .railnames import no_rails

        if no_rails(self.board, self.config):
            return []  # what find_rails returns then, without importing the PDN model
        from .pdn.rails import find_rails

        return find_rails(self.board, self.config, self.materials)

    @functools.cached_property
    def irdrop(self) -> list[RailIR]:
        """DC IR drop of every rail whose config entry declares sources/loads (empty, and
        scipy never imported, when none does), and the core rail (declared ``role: core`` or
        recognised by the PDN analysis) as unsolved when it declares neither."""
        if not self.config.rails and not any(r.role == "core" and r.nets for r in self.rails):
            return []  # what compute() returns then, without importing it (start-up, issue 18)
        from .irdrop import compute

        return compute(self.board, self.config, self.rails, self.stackup_basis)
