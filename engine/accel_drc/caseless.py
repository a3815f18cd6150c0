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
