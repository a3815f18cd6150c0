"""Bounds and guards against hostile or careless input, in one place (``docs/hostile-input.md``).

Why a module of its own: the same few dangers recur in every reader and writer — a pattern that
backtracks for hours, a number that is NaN, a name that carries terminal escapes, an output
that lands on an input — and each must be handled the same way wherever it appears.  Nothing
here imports the rest of the package but its errors, so readers, config, packs and reports can
all use it.
"""

from __future__ import annotations

import contextlib
import fnmatch
import math
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, Callable

from .errors import InputError

#: longest net (or net-class) name any regular expression is matched against.  Built-in
#: recognition patterns and config regexes are not linear in the name length (``.*X.*Y`` is
#: quadratic, a 40 KB name took 22 s); KiCad's own hierarchical names stay far below this
#: (vme-wren's longest is 28 characters).  A longer name is matched by no pattern and the
#: board says so in a warning.
MAX_MATCH_NAME = 256

#: deepest element nesting an IPC-2581 document may have (real exports nest about 12 levels)
MAX_XML_DEPTH = 256

#: largest YAML file (rule pack or config) accepted: the biggest real one is 15 KB; PyYAML
#: needs about 100 bytes of memory per byte and 4 s per MB.
MAX_YAML_BYTES = 1 << 20

#: largest ``.kicad_pcb`` read: vme-wren, the biggest KiCad demo, is 69.6 MB and the reader needs
#: about 2.5 bytes of memory per byte; 2 GiB keeps a sparse or runaway file from exhausting memory
MAX_BOARD_BYTES = 2 << 30

#: largest ``.kicad_pro``: the biggest real one is 40 KB (vme-wren; fixtures and the KiCad demos
#: are 28 KB and less).  ``json`` needs about 30 bytes of memory per byte (30 MB cost 861 MB)
MAX_PROJECT_BYTES = 4 << 20

#: net-class wildcards in one ``.kicad_pro``: at most this many (real projects: up to 100) ...
MAX_NET_PATTERNS = 4096
#: ... each at most this long (the longest real one is 17 characters) ...
MAX_NET_PATTERN = 256
#: ... and this many characters in all (real: 1.4 KB).  Python compiles a glob's regex at
#: 2–20 µs per character (1.6 MB of patterns took 32 s and 866 MB): this keeps it under a second
MAX_NET_PATTERN_CHARS = 64 << 10

#: most track segments of one multi-drop net whose driver-to-load paths are traced (the skew
#: check): a DDR fly-by net has 30-200 (vme-wren's longest: 98); a net of more is not traced and
#: the coverage says so
MAX_TRACE_SEGMENTS = 5000

#: a propagation delay a KiCad 10 tuning profile may declare (ps/mm): light in vacuum is 3.336
#: ps/mm, and 100 ps/mm is an εeff of 900; a value outside is no velocity and is not used
TUNING_DELAY_PS_PER_MM = (3.3, 100.0)

#: largest IPC-2581 document, as a file or unzipped (vme-wren exports 99.8 MB, 1.45 M elements)
MAX_XML_BYTES = 4 << 30
#: most a zipped IPC-2581 document may unpack to per byte of its compressed data: real exports
#: compress 10–18 times (vme-wren 13.3); deflate reaches 1,000, which is how a 199 KB zip held
#: 50 million elements
MAX_ZIP_RATIO = 100
#: most ``<`` (tags, comments) an IPC-2581 document may hold: vme-wren has 1.65 M.  Each element
#: costs the streaming reader about a microsecond, so this bounds the parse at tens of seconds
MAX_XML_TAGS = 32 << 20
#: longest single piece of XML markup (a tag with its attributes, a comment): the longest in real
#: exports is 667 bytes.  Expat (before 2.6) rescans an unfinished tag from its start on every
#: chunk fed, so one 255 MB attribute took 37 s and grew quadratically
MAX_XML_TOKEN = 1 << 20

#: most extra rule packs a config may list (``rules.packs``); each may be 1 MiB of YAML, which
#: costs about a second to load
MAX_RULE_PACKS = 16
#: most bytes the extra rule packs may hold together: each built-in class pack is about 46 KB,
#: and YAML costs about a second per MiB to load, so 16 packs of 1 MiB each took 16-18 s
MAX_RULE_PACK_BYTES = 2 << 20
#: a template's format spec (``{max_stub_mm:.3f}`` in ``rules/signal_rules.yaml``): an alignment,
#: a sign, a width and a precision of at most two digits and a number type.  ``{x:>999999999}``
#: would build a gigabyte string per rule; real specs are ``.3f``, ``.2f``, ``.1f``, ``g``.
TEMPLATE_FORMAT_SPEC = re.compile(r"[<>^=]?[+ -]?\d{0,2}(?:\.\d{1,2})?[eEfFgGd%]?\Z")


# ---------------------------------------------------------------------------------------------
# Reading the user's files
# ---------------------------------------------------------------------------------------------


def size_text(n: int) -> str:
    """``n`` bytes for a message: ``4 MiB``, ``64 KiB``, ``2 GiB`` or ``123 bytes``."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def over_limit(path: str, size: int, limit: int, line: int | None = None) -> InputError:
    """The one refusal for a file (or part of one) over a bound: ``N bytes, over the M limit``."""
    return InputError(path, f"{size:,} bytes, over the {size_text(limit)} limit", line=line)


#: flags that keep ``open`` itself from blocking on a FIFO with no writer or from making a
#: terminal the controlling one; ``O_BINARY`` matters on Windows only
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)


def open_regular(path: str, limit: int | None) -> IO[bytes]:
    """``open(path, 'rb')`` for a regular file of at most ``limit`` bytes (None: any size).

    Why: a project file symlinked to ``/dev/zero`` was read until memory ran out (3.7 GB), one
    linked to ``/dev/stdin`` or a FIFO hung.  The file is opened first, without blocking, and
    the opened descriptor is checked (``fstat``), so nothing can be swapped in between a check
    and the read.  Raises :class:`InputError` (exit 3): ``not a regular file`` or
    ``N bytes, over the M limit``; an OS error is ``cannot open: …``."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise InputError(path, f"cannot open: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(path, "not a regular file")
        if limit is not None and st.st_size > limit:
            raise over_limit(path, st.st_size, limit)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`open_regular`); a file
    that grows past the bound while it is read is refused too (at most ``limit + 1`` is read).

    Read as its size plus one byte (``read(n)`` allocates ``n`` at once, so never the bound),
    then on in 1 MiB steps only if the file grew meanwhile."""
    with open_regular(path, limit) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            parts = [fh.read(size + 1)]
            total = len(parts[0])
            while total > size and total <= limit:
                more = fh.read(min(1 << 20, limit + 1 - total))
                if not more:
                    break
                parts.append(more)
                total += len(more)
        except OSError as exc:
            raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if total > limit:
        raise over_limit(path, total, limit)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def unzip_limit(compressed: int) -> int:
    """Most bytes a zip member of ``compressed`` bytes may unpack to: :data:`MAX_ZIP_RATIO` times
    its size, but at least 1 MiB (a small file's ratio says nothing) and at most
    :data:`MAX_XML_BYTES`."""
    return min(MAX_XML_BYTES, max(MAX_ZIP_RATIO * compressed, 1 << 20))


def is_regular(path: str) -> bool:
    """Whether ``path`` (symlinks followed) is a regular file; no error for a missing one."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# Matching with bounded cost
# ---------------------------------------------------------------------------------------------


def search(pattern: re.Pattern[str] | str, name: str) -> bool:
    """``pattern.search(name)`` for a name of at most :data:`MAX_MATCH_NAME` characters; a longer
    name matches nothing (the bound keeps a super-linear pattern from hanging on it)."""
    if len(name) > MAX_MATCH_NAME:
        return False
    if isinstance(pattern, str):
        pattern = re.compile(pattern)  # cached by re
    return pattern.search(name) is not None


def fullmatch(pattern: re.Pattern[str] | str, name: str) -> bool:
    """``pattern.fullmatch(name)``, bounded as :func:`search`."""
    if len(name) > MAX_MATCH_NAME:
        return False
    if isinstance(pattern, str):
        pattern = re.compile(pattern)  # cached by re
    return pattern.fullmatch(name) is not None


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A KiCad net-class wildcard (``*`` any run, ``?`` one character; ``[`` is literal) as a
    compiled regex whose ``match`` is a whole-name match without backtracking blow-up.

    The naive translation of ``*`` to ``.*`` backtracks: ``*a*a*a*a*a*a*a*a*a*a*a*ab`` against a
    60-character net never finished.  :func:`fnmatch.translate` (Python 3.9+) makes every ``*``
    but the last an atomic, leftmost match — ``(?>.*?a)``, or the equivalent lookahead and
    back-reference on 3.9/3.10 — so nothing is ever retried and a match costs
    O(len(name) × len(pattern)).  Returned as a plain compiled regex so callers pay no
    Python call per match (vme-wren: 72 patterns × 1,801 nets)."""
    stars = pattern.count("*")
    if stars <= 1 or (stars == 2 and pattern[0] == pattern[-1] == "*"):
        # one star, or "*X*" (a substring test), cannot blow up: the first ".*" backs off one
        # position at a time and the last always matches, O(len(name) × len(X)).  The plain
        # translation matches faster than the atomic one.
        body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
        return re.compile(body + r"\Z", re.S)
    return re.compile(fnmatch.translate(pattern.replace("[", "[[]")))


#: regex text that means something else inside one group of a larger alternation: a
#: back-reference or named group (numbers and names shift), a conditional, a global inline flag
_NOT_COMBINABLE = re.compile(r"\\[1-9gk]|\(\?P|\(\?\(|\(\?[aiLmsux]+\)")


def first_full_match(regexes: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One regex whose ``match`` tells which of ``regexes`` (each a whole-name
    :func:`glob_regex`) is the first, in order, whose ``match`` succeeds: ``int(m.lastgroup[1:])``.

    Why: a net's class is the first of a project's wildcard patterns that matches it; on
    vme-wren that was 72 Python-level ``match`` calls for each of 1,800 nets.  An alternation
    tries its alternatives in order at the same position and takes the first that matches
    (each ends with ``\\Z``, so a match is a whole-name match), which is the loop's answer; the
    named group of an alternative closes after any group inside it, so it is ``lastgroup``.
    None (keep the loop) when a pattern's text could mean something else inside the
    alternation (3.9/3.10's :func:`fnmatch.translate` uses back-references) or a flag other
    than DOTALL (scoped as ``(?s:…)``) is set."""
    parts = []
    for k, rx in enumerate(regexes):
        if rx.flags & ~(re.S | re.U) or _NOT_COMBINABLE.search(rx.pattern):
            return None
        body = f"(?s:{rx.pattern})" if rx.flags & re.S else rx.pattern
        parts.append(f"(?P<_{k}>{body})")
    if not parts:
        return None
    try:
        return re.compile("|".join(parts))
    except (re.error, RecursionError, OverflowError):
        return None


class Glob:
    """:func:`glob_regex` as an object with ``match(name) -> bool``."""

    __slots__ = ("pattern", "_rx")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._rx = glob_regex(pattern)

    def match(self, name: str) -> bool:
        """Whether the whole of ``name`` matches (case-sensitive, as KiCad)."""
        return self._rx.match(name) is not None


_REPEAT_OPS: frozenset[str] = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


def _sre_parse() -> Any:
    try:  # Python 3.11+: the parser moved (importing sre_parse warns there)
        import re._parser as parser  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse as parser  # type: ignore[no-redef]
    return parser


def _unbounded(op: Any, av: Any) -> bool:
    return str(op) in _REPEAT_OPS and av[1] > 1


def _walk(items: Iterable[Any], inside: bool) -> str | None:
    for op, av in items:
        name = str(op)
        if name in _REPEAT_OPS:
            repeats = av[1] > 1
            if repeats and inside:
                return "a quantifier inside a repeated group (like '(a+)+')"
            got = _walk(av[2], inside or repeats)
            if got:
                return got
        elif name == "BRANCH":
            if inside and len(av[1]) > 1:
                return "an alternation inside a repeated group (like '(a|ab)*')"
            for branch in av[1]:
                got = _walk(branch, inside)
                if got:
                    return got
        elif name == "SUBPATTERN":
            got = _walk(av[-1], inside)
            if got:
                return got
        elif name in ("ASSERT", "ASSERT_NOT"):
            got = _walk(av[1], inside)
            if got:
                return got
        elif name == "GROUPREF_EXISTS":
            for sub in av[1:]:
                if sub is not None:
                    got = _walk(sub, inside)
                    if got:
                        return got
    return None


def catastrophic(pattern: str) -> str | None:
    """Why ``pattern`` may backtrack exponentially, or None.

    A static screen of the parsed pattern: a repeated group (``+``, ``*``, ``{2,}``) that holds
    another such quantifier or an alternation is refused — those are the shapes with
    exponentially many ways to split one name (``(a+)+`` against 33 characters hung).  A
    quantifier after a quantifier (``.*X.*Y``) is only polynomial and stays allowed; the name
    length bound (:data:`MAX_MATCH_NAME`) keeps it short."""
    try:
        tree = _sre_parse().parse(pattern)
    except Exception:  # re.compile reports syntax errors with a better message
        return None
    return _walk(tree, False)


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------


def non_finite(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], float]]:
    """Every NaN or infinite float in a parsed YAML/JSON tree, with its path."""
    if isinstance(data, float):
        if not math.isfinite(data):
            yield path, data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from non_finite(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from non_finite(v, (*path, i))


# ---------------------------------------------------------------------------------------------
# Text that reaches a terminal or an XML file
# ---------------------------------------------------------------------------------------------

#: the bidirectional-text controls (marks, embeddings, overrides, isolates): a net named
#: "\u202eLIAF" reads "FAIL" backwards, and one override can reorder the rest of a line, in a
#: terminal or a pull request alike
BIDI_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
#: C0 controls but newline, DEL and C1 controls, shown as ``\xNN`` in terminal output (a net
#: named "x\n\x1b[8m…" must not forge a verdict line or hide text); bidi controls as ``<U+202E>``
_TERMINAL = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c != 0x0A},
    **{c: f"<U+{c:04X}>" for c in BIDI_CONTROLS},
}
_TERMINAL_ALL = {**_TERMINAL, 0x0A: "\\n"}
#: what XML 1.0 cannot carry: C0 controls but tab, newline and carriage return; lone surrogates
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def terminal(text: str, keep_newlines: bool = False) -> str:
    """``text`` with control characters escaped visibly (``\\x1b``, ``\\n``, ``<U+202E>``).

    The one escaping of user text (net, layer, material and class names, messages) for what a
    person reads: the terminal summaries and, under its own escaping, the Markdown report."""
    return text.translate(_TERMINAL if keep_newlines else _TERMINAL_ALL)


def xml_text(text: str) -> str:
    """``text`` with what XML 1.0 cannot carry escaped visibly as ``\\xNN``/``\\uNNNN``."""
    if not _XML_BAD.search(text):
        return text
    return _XML_BAD.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


def same_file_key(path: str) -> str:
    """What an output path really names: symlinks followed, case as the OS compares it."""
    return os.path.normcase(os.path.realpath(path))


def write_text(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so no reader ever sees half a file
    (:func:`write_atomically`); ``-`` is stdout."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_atomically(path, lambda fh: fh.write(text))


def refuse_read_only(path: str) -> None:
    """Raise ``PermissionError`` when ``path`` is an existing regular file the user made
    read-only: a rename would replace it where ``open()`` would refuse.  No write bit at all
    counts as read-only for root too, who ``os.access`` says may write anything."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return
    if os.path.isfile(real) and (not st.st_mode & 0o222 or not os.access(real, os.W_OK)):
        raise PermissionError(13, "Permission denied (the file is read-only)", path)


def write_atomically(path: str, fill: Callable[[IO[Any]], Any], binary: bool = False) -> None:
    """Write ``path`` through ``fill(fh)`` so no reader ever sees half a file.

    A regular file (or a new one) is written to a private temporary file in the same folder
    (``mkstemp``: a fresh name no one else writes to, never a symlink someone planted) and
    renamed over the target (``os.replace`` is atomic on one file system): two runs writing the
    same file leave one whole file, and a crash leaves the old one.  SIGTERM and SIGHUP while
    the temporary file exists remove it and exit ``128 + signum`` (:func:`clean_exit_on_signals`),
    as Ctrl-C does.  A symlink is followed, so the link stays and its target is replaced.  A
    read-only file is refused (:func:`refuse_read_only`).  Something that is not a regular file
    (``/dev/stdout``, a FIFO) is written in place.  Text is UTF-8 (``binary`` False)."""
    kw: dict[str, Any] = {} if binary else {"encoding": "utf-8", "errors": "backslashreplace"}
    mode = "wb" if binary else "w"
    real = os.path.realpath(path)
    refuse_read_only(path)
    if os.path.exists(real) and not os.path.isfile(real):
        with open(real, mode, **kw) as fh:
            fill(fh)
        return
    import tempfile  # only when writing: keeps the import of every reader light

    folder = os.path.dirname(real) or "."
    tmp = None
    with clean_exit_on_signals():
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{os.path.basename(real)}.", suffix=".tmp", dir=folder
            )
            with os.fdopen(fd, mode, **kw) as fh:
                fill(fh)
                fh.flush()
            os.chmod(tmp, _mode_for(real))
            os.replace(tmp, real)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise


def _mode_for(real: str) -> int:
    """The permissions a rewritten file keeps: the old file's, else what ``open()`` would give
    a new one (0666 less the umask; ``mkstemp`` makes 0600)."""
    try:
        return os.stat(real).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived while a file was being written: the process ends with
    ``128 + signum`` (the shell's code for a death by that signal) once its temporary files
    are removed, as ``KeyboardInterrupt`` does for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def _terminated(signum: int, frame: Any) -> None:
    import signal

    sys.stderr.write(f"accel-drc: {signal.Signals(signum).name}: stopped, nothing half-written\n")
    raise Terminated(signum)


@contextlib.contextmanager
def clean_exit_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread
    (so ``except BaseException`` / ``finally`` clean-ups run) instead of killing the process
    outright; the previous handlers come back after.  Off the main thread (where Python cannot
    set handlers) and for a signal someone set to be ignored, nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    old = {}
    for sig in wanted:
        prev = signal.getsignal(sig)
        if prev == signal.SIG_DFL:  # an ignored signal stays ignored, a handler stays
            old[sig] = prev
            signal.signal(sig, _terminated)
    try:
        yield
    finally:
        for sig, prev in old.items():
            signal.signal(sig, prev)
