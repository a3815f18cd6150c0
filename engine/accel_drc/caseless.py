"""Case-insensitive patterns of the rule data that cost almost nothing to compile.

Why: every run compiled the ~140 recognition patterns of ``signals.yaml`` and
``connectors.yaml`` with ``re.IGNORECASE``.  In Unicode mode that flag makes ``re`` fold the case
of every character class over the whole Basic Multilingual Plane (``[^a-z0-9]`` holds ``k`` and
``s``, whose case partners ``K`` U+212A and ``ſ`` U+017F lie beyond Latin-1), which costs
more on every run than reading a small board.  With ``re.ASCII`` the same pattern compiles many
times faster.

Exactness: :class:`CaselessPattern` matches a name with the ASCII-mode pattern only when both
could not tell the modes apart: the pattern text is ASCII with no escape that can name a
non-ASCII character (``\\u``, ``\\U``, ``\\N``, ``\\x``, octal or back-references: those keep the
Unicode pattern), and the name is printable ASCII.  For such a name every character's case
partners that an ASCII pattern can hold are ASCII too, and ``\\w``, ``\\d``, ``\\s``, ``\\b`` agree
(``\\s`` differs only on ``\\x1c``–``\\x1f``, which are not printable).  Any other name (a net
called ``µC_RST``) is matched by the Unicode pattern, compiled on first use.  Net names are
almost always printable ASCII, so the Unicode patterns are almost never compiled.
"""

from __future__ import annotations

import re
from typing import Any

#: escapes that can denote a character beyond ASCII (or refer back to a group)
_WIDE_ESCAPE = re.compile(r"\\[uUNx0-9]")


class CaselessPattern:
    """``re.compile(pattern, re.IGNORECASE)`` for ``search``/``match``/``fullmatch`` (the
    match objects are those of :mod:`re`); ``pattern`` and ``flags`` as on ``re.Pattern``."""

    __slots__ = ("pattern", "_ascii", "_full", "_ready")

    flags = re.IGNORECASE | re.UNICODE

    def __init__(self, pattern: str, validate: bool = True) -> None:
        """Compile ``pattern``.  ``validate``: compile now, the Unicode pattern included, so a
        bad pattern raises ``re.error`` here (a user's pack or config); False for patterns known
        to compile (the validated bundled rule data): nothing is compiled before the first
        match (a board without net classes never compiles the net-class patterns), and the
        Unicode form waits for a name that needs it."""
        self.pattern = pattern
        self._full: re.Pattern[str] | None = None
        self._ascii: re.Pattern[str] | None = None
        self._ready = False
        if validate:
            self._full = re.compile(pattern, re.IGNORECASE)
            self._prepare()

    def _prepare(self) -> None:
        pattern = self.pattern
        if pattern.isascii() and not _WIDE_ESCAPE.search(pattern):
            try:
                self._ascii = re.compile(pattern, re.IGNORECASE | re.ASCII)
            except (re.error, ValueError):  # an inline (?u): only the Unicode pattern is right
                self._ascii = None
        if self._ascii is None and self._full is None:
            self._full = re.compile(pattern, re.IGNORECASE)
        self._ready = True  # last: another thread meanwhile compiles too, never less

    def _for(self, name: str) -> re.Pattern[str]:
        if not self._ready:
            self._prepare()
        if self._ascii is not None and name.isascii() and name.isprintable():
            return self._ascii
        if self._full is None:
            self._full = re.compile(self.pattern, re.IGNORECASE)
        return self._full

    def search(self, name: str, *args: Any) -> re.Match[str] | None:
        return self._for(name).search(name, *args)

    def match(self, name: str, *args: Any) -> re.Match[str] | None:
        return self._for(name).match(name, *args)

    def fullmatch(self, name: str, *args: Any) -> re.Match[str] | None:
        return self._for(name).fullmatch(name, *args)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CaselessPattern):
            return self.pattern == other.pattern
        if isinstance(other, re.Pattern):
            return other.pattern == self.pattern and other.flags == self.flags
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"CaselessPattern({self.pattern!r})"


try:  # the regular-expression parser of the re module (3.11+: re._parser)
    from re import _constants as _sre_c
    from re import _parser as _sre_p
except ImportError:  # Python 3.9, 3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_p  # type: ignore[no-redef]

_REPEATS = tuple(
    getattr(_sre_c, n)
    for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if hasattr(_sre_c, n)
)


#: :func:`required_literals` of the bundled rule data's patterns, computed when the validated
#: snapshot was built (:mod:`accel_drc.bundled` registers them when the snapshot is valid, so a
#: small board never parses ~150 patterns to index them); a function of the pattern text alone
_KNOWN: dict[str, frozenset[str] | None] = {}


def register_literals(table: dict[str, Any]) -> None:
    """Remember ``{pattern: its required literals (a list) or None}`` (the snapshot's table)."""
    for pat, lits in table.items():
        _KNOWN[pat] = None if lits is None else frozenset(lits)


def required_literals(pattern: str) -> frozenset[str] | None:
    """Lower-case strings one of which every match of ``pattern`` (compiled with
    ``re.IGNORECASE | re.ASCII``) contains, lower-cased; None when the pattern requires no
    literal (or its form is not understood).

    Why it is exact: a literal matched case-insensitively in ASCII mode (or case-sensitively,
    under a scoped ``(?-i:…)``) matches only characters with the same ASCII lower case, so
    a literal that every match must contain appears in ``text.lower()`` of any ASCII text the
    pattern finds (``str.lower`` of ASCII text is the ASCII lower case).  The same holds in
    Unicode mode for an ASCII text: no two ASCII characters fold together there unless their
    ASCII lower cases agree (the Kelvin sign and the long s are not ASCII).  Only elements that
    every match passes through are used: the top-level sequence, groups in it, repeats of at
    least one, and alternations whose every branch requires one (their union)."""
    known = _KNOWN.get(pattern, _UNSET)
    if known is not _UNSET:
        return known  # type: ignore[return-value]
    return parse_literals(pattern)


def parse_literals(pattern: str) -> frozenset[str] | None:
    """:func:`required_literals` from the parse tree (never the registered table)."""
    if not pattern.isascii():
        return None
    try:
        items = _sre_p.parse(pattern, re.IGNORECASE | re.ASCII)
        return _required(list(items))
    except Exception:  # noqa: BLE001 - an unknown parse tree: no prefilter, never wrong
        return None


def _required(items: list[Any]) -> frozenset[str] | None:
    best: frozenset[str] | None = None

    def consider(cand: frozenset[str] | None) -> None:
        nonlocal best
        shortest = min(map(len, cand)) if cand else 0
        if shortest > 0 and (best is None or shortest > min(map(len, best))):
            best = cand

    run: list[str] = []
    for op, av in items:
        if op is _sre_c.LITERAL:
            if av >= 128:
                raise ValueError("non-ASCII literal")
            run.append(chr(av).lower())
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        if op is _sre_c.SUBPATTERN:
            consider(_required(list(av[-1])))
        elif op is _sre_c.BRANCH:
            subs = [_required(list(b)) for b in av[1]]
            if all(subs):
                consider(frozenset().union(*subs))  # type: ignore[arg-type]
        elif op in _REPEATS and av[0] >= 1:
            consider(_required(list(av[2])))
    consider(frozenset({"".join(run)}) if run else None)
    return best


class FirstMatch:
    """Which of an ordered list of case-insensitive patterns is the first (in list order) that
    ``search`` finds in a text, at a fraction of the cost of trying each in turn.

    Why: the signal recognition tried every net name against every pattern of
    ``signals.yaml`` through :meth:`CaselessPattern.search`, 238k Python-level calls on a
    1,800-net board, though nearly every name matches none.

    How, exactly: the first :attr:`INDEX_AFTER` texts are tried one pattern at a time; then,
    for a printable-ASCII text (the ASCII mode of :class:`CaselessPattern` is
    right for it) the text is lower-cased once; a pattern is tried only when one of its
    :func:`required_literals` is in it (a pattern without any is always tried), and with its
    ASCII-mode compiled form directly (compiled the first time the pattern is tried: most
    patterns never are on a given board).  When every pattern requires a literal, one search for
    any literal of any pattern rejects most names in one call.  Any other text, and any
    pattern whose ASCII form is not right (see :class:`CaselessPattern`), goes through
    ``pattern.search`` as before.  Patterns that are not case-insensitive ``re`` patterns or
    :class:`CaselessPattern` are always tried through their own ``search``."""

    __slots__ = ("patterns", "_ascii", "_by_literal", "_always", "_gate", "_calls")

    #: texts tried one pattern at a time before the literal index is built (parsing every
    #: pattern costs more than a small board's few nets)
    INDEX_AFTER = 32

    def __init__(self, patterns: Any) -> None:
        self.patterns: tuple[Any, ...] = tuple(patterns)
        self._calls = 0
        self._ascii: list[Any] = []
        self._by_literal: tuple[tuple[str, tuple[int, ...]], ...] = ()
        self._always: tuple[int, ...] = ()
        self._gate: re.Pattern[str] | None = None

    def _index(self) -> None:
        # per pattern: its ASCII-mode compiled form for printable-ASCII texts, None where
        # that is not the form to use; compiled when the pattern is first tried (_UNSET)
        ascii_: list[Any] = []
        by_literal: dict[str, list[int]] = {}
        always: list[int] = []
        for k, p in enumerate(self.patterns):
            plain = _plain(p)
            ascii_.append(_UNSET if plain else None)
            req = required_literals(p.pattern) if plain else None
            if req is None:
                always.append(k)
            else:
                for lit in sorted(req):
                    by_literal.setdefault(lit, []).append(k)
        self._by_literal = tuple((lit, tuple(ks)) for lit, ks in by_literal.items())
        self._always = tuple(always)
        if self._calls > self.INDEX_AFTER:
            self._build_gate()
        self._ascii = ascii_  # last: another thread meanwhile sees a complete index or none

    def _all_known(self) -> bool:
        """Every plain pattern's literals are registered (the bundled rule data): indexing is
        then cheap from the first text on (no pattern is parsed)."""
        return bool(_KNOWN) and all(p.pattern in _KNOWN for p in self.patterns if _plain(p))

    def _build_gate(self) -> None:
        """One search for any literal of any pattern (only when every pattern requires one):
        it rejects most names in one call; built once :attr:`INDEX_AFTER` texts were seen (its
        compile costs more than a small board's few names)."""
        if self._by_literal and not self._always:
            lits = sorted((lit for lit, _ in self._by_literal), key=lambda x: (-len(x), x))
            self._gate = re.compile("|".join(map(re.escape, lits)))

    def first(self, text: str) -> int:
        """Index of the first pattern (list order) whose ``search`` finds ``text``; -1 if none."""
        if not self._ascii:
            self._calls += 1
            if self.patterns and (self._calls > self.INDEX_AFTER or self._all_known()):
                self._index()
        elif self._gate is None and self._calls <= self.INDEX_AFTER:
            self._calls += 1
            if self._calls > self.INDEX_AFTER:
                self._build_gate()
        if not (self._ascii and text.isascii() and text.isprintable()):
            for k, p in enumerate(self.patterns):
                if p.search(text):
                    return k
            return -1
        low = text.lower()
        if self._gate is not None and self._gate.search(low) is None:
            return -1
        cand = set(self._always)
        for lit, ks in self._by_literal:
            if lit in low:
                cand.update(ks)
        ascii_ = self._ascii
        for k in sorted(cand):
            rx = ascii_[k]
            if rx is _UNSET:
                rx = ascii_[k] = _ascii_form(self.patterns[k])
            if rx.search(text) if rx is not None else self.patterns[k].search(text):
                return k
        return -1

    def any(self, text: str) -> bool:
        """Whether any of the patterns' ``search`` finds ``text``."""
        return self.first(text) >= 0


_UNSET = object()


def _plain(p: Any) -> bool:
    """A :class:`CaselessPattern`, or an ``re`` pattern compiled with ``re.IGNORECASE`` alone."""
    if isinstance(p, CaselessPattern):
        return True
    return (
        isinstance(p, re.Pattern)
        and p.flags == re.IGNORECASE | re.UNICODE
        and isinstance(p.pattern, str)
    )


def _ascii_form(p: Any) -> re.Pattern[str] | None:
    """The compiled pattern :class:`CaselessPattern` uses for printable-ASCII names, or None
    when that is not the ASCII form (or ``p`` is not a plain case-insensitive pattern)."""
    if isinstance(p, re.Pattern):
        if p.flags != re.IGNORECASE | re.UNICODE or not isinstance(p.pattern, str):
            return None
        p = CaselessPattern(p.pattern, validate=False)
    if not isinstance(p, CaselessPattern):
        return None
    if not p._ready:
        p._prepare()
    return p._ascii
