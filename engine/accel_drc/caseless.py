"""Case-insensitive patterns of the rule data that cost almost nothing to compile.

Why: every run compiled the ~140 recognition patterns of ``signals.yaml`` and
``connectors.yaml`` with ``re.IGNORECASE``.  In Unicode mode that flag makes ``re`` fold the case
of every character class over the whole Basic Multilingual Plane (``[^a-z0-9]`` holds ``k`` and
``s``, whose case partners ``K`` U+212A and ``ſ`` U+017F lie beyond Latin-1), about 0.2–1.7 ms a
pattern: 20 ms of every run, more than reading a small board.  With ``re.ASCII`` the same
pattern compiles 25 times faster.

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


#: pattern text that cannot be wrapped into one alternation with others unchanged: a
#: back-reference or named group (the group numbers and names shift), a conditional, or a
#: global inline flag (``(?x)`` would apply to every alternative)
_NOT_COMBINABLE = re.compile(r"\\[1-9]|\(\?P|\(\?\(|\(\?[aiLmsux]+\)|\\[gk]")


class FirstMatch:
    """Which of an ordered list of case-insensitive patterns is the first (in list order) that
    ``search`` finds in a text, with one regular-expression call instead of one per pattern.

    Why: the signal recognition tried every net name against every pattern of
    ``signals.yaml`` in turn, 238k Python-level ``search`` calls (0.4 s) on a 1,800-net board,
    though nearly every name matches none.

    How, exactly: the patterns become one anchored alternation of look-aheads,
    ``^(?:(?P<_0>(?=[\\s\\S]*?(?:p0)))|(?P<_1>(?=[\\s\\S]*?(?:p1)))|…)``.  The look-ahead of
    alternative *k* succeeds iff ``pk`` matches at some position of the text (the lazy
    ``[\\s\\S]*?`` tries the positions in the order ``search`` does, ``^``, ``$`` and
    look-behinds see the same string), and an alternation takes its first alternative that
    succeeds: the matched group is the first pattern in list order that ``search`` finds.  The
    combined pattern is a :class:`CaselessPattern`, so it gets the same ASCII/Unicode choice
    per name as each pattern on its own.  A pattern the alternation could change (see
    ``_NOT_COMBINABLE``) or any pattern that is not a plain case-insensitive pattern keeps the
    one-by-one loop for the whole list."""

    __slots__ = ("patterns", "_combined")

    def __init__(self, patterns: Any) -> None:
        self.patterns: tuple[Any, ...] = tuple(patterns)
        self._combined: CaselessPattern | None = None
        if not self.patterns or not all(_combinable(p) for p in self.patterns):
            return
        text = (
            "^(?:"
            + "|".join(
                f"(?P<_{k}>(?=[\\s\\S]*?(?:{p.pattern})))" for k, p in enumerate(self.patterns)
            )
            + ")"
        )
        try:
            combined = CaselessPattern(text, validate=False)
            combined._prepare()  # the ASCII form now (the Unicode one if that cannot be)
        except (re.error, ValueError, RecursionError, OverflowError):
            return  # (a limit of the re module): the loop is always right
        self._combined = combined

    def first(self, text: str) -> int:
        """Index of the first pattern (list order) whose ``search`` finds ``text``; -1 if none."""
        if self._combined is None:
            for k, p in enumerate(self.patterns):
                if p.search(text):
                    return k
            return -1
        m = self._combined.match(text)
        # the named group of the alternative closes after every group nested in it, so it is
        # the last matched group (``lastgroup``)
        return -1 if m is None else int(m.lastgroup[1:])  # type: ignore[index]

    def any(self, text: str) -> bool:
        """Whether any of the patterns' ``search`` finds ``text``."""
        return self.first(text) >= 0


def _combinable(p: Any) -> bool:
    """A case-insensitive pattern whose text means the same inside a group of an alternation."""
    plain = isinstance(p, CaselessPattern) or (
        isinstance(p, re.Pattern) and p.flags == re.IGNORECASE | re.UNICODE
    )
    return plain and isinstance(p.pattern, str) and not _NOT_COMBINABLE.search(p.pattern)
