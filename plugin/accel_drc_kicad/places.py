"""Where a click may write: the report folder, checked so nothing outside the project changes.

A board's project is the folder that holds it.  Its ``accel-drc.yaml`` and its files come with
the project (a cloned repository), so neither may send the click's writes, or a failed click's
removals, anywhere else (issue #30 item 2: ``report.dir: ../../.config/Code/User`` or a committed
``accel-drc`` symlink made a click overwrite, and a failed one delete, a settings file in the
user's home).  So the report folder is

* inside the project folder: ``report.dir`` relative, with no ``..`` leading out of it;
* reached through real folders only: every component from the project folder down is checked
  with ``lstat`` (made with ``mkdir`` where missing, then checked again), and its real path
  must lie under the project's real path;
* writable (tried, not guessed: ``os.access`` says yes to root on a read-only bind mount);
* free of anything the click would overwrite that is not its own: the report, JSON and error
  page names must be absent or regular files an accel-drc run wrote (:func:`is_ours`), the lock
  name absent or a regular file.

Otherwise the click writes to a per-user folder, :func:`user_folder`
(``$XDG_CACHE_HOME/accel-drc/<board>-<hash of its path>``), and says so and why (the
report's banner, the error page): the user still gets the report, the project gets nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePath

log = logging.getLogger(__name__)

#: the report folder beside the board when ``report.dir`` names none
REPORT_DIR = "accel-drc"
#: the lock file that makes a second click during a run do nothing (in the report folder)
LOCK_NAME = ".accel-drc.lock"
#: the page a failed marker commit leaves beside a complete report
MARKER_ERROR_PAGE = "accel-drc-error.html"
#: what an accel-drc HTML report (``<meta name="generator" …>``), error page and JSON report
#: start with; :func:`is_ours` looks for one of them in a file's first bytes
SIGNATURES = (
    b'<meta name="generator" content="accel-drc',
    b"<title>accel-drc: error</title>",
    b'"name": "accel-drc"',
)
_HEAD_BYTES = 4096


class Unsafe(Exception):
    """A report folder the click must not write to; ``str()`` says why, for the user."""


@dataclass(frozen=True)
class Place:
    """The folder a click writes to, and why it is not the one the user would look in."""

    dir: Path
    #: empty when the report is where the project says; else one sentence naming the folder
    note: str = ""
    #: folders this click made (the lock removes them again when they are left empty)
    created: tuple[Path, ...] = ()


def output_names(board_file: str) -> tuple[str, ...]:
    """The files a click writes in its folder: the report, the JSON and the error page."""
    stem = Path(board_file).stem if board_file else ""
    names = (f"{stem}.html", f"{stem}.json") if stem else ()
    return (*names, MARKER_ERROR_PAGE)


def is_ours(path: Path) -> bool:
    """True for a regular file (not a symlink) that an accel-drc run wrote: a report, a JSON
    report or an error page, recognised by its first bytes."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(str(path), flags)
        with os.fdopen(fd, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return False
    return any(sig in head for sig in SIGNATURES)


def inside(configured: str | None) -> PurePath:
    """``report.dir`` as a path inside the project folder (``accel-drc`` when unset), or
    :class:`Unsafe` for an absolute path or one whose ``..`` leads out of the folder."""
    if not configured:
        return PurePath(REPORT_DIR)
    configured = str(configured)
    raw = PurePath(configured)
    if raw.is_absolute() or raw.anchor or configured.startswith(("~", "/", "\\")):
        raise Unsafe(f"report.dir {configured!r} is not a path inside the project folder")
    parts: list[str] = []
    for part in raw.parts:
        if part == "..":
            if not parts:
                raise Unsafe(f"report.dir {configured!r} leads out of the project folder")
            parts.pop()
        elif part != ".":
            parts.append(part)
    return PurePath(*parts) if parts else PurePath(".")


def real_folders(base: Path, rel: PurePath, mode: int = 0o777) -> tuple[Path, list[Path]]:
    """``base / rel``, made where missing, every component below ``base`` a real folder (not a
    symlink, not a file); (the folder, the folders made).  :class:`Unsafe` names the first
    component that is not; OSError when one cannot be made (a read-only disk)."""
    here = base
    made: list[Path] = []
    try:
        for part in rel.parts:
            if part in (".", ""):
                continue
            here = here / part
            try:
                st = os.lstat(here)
            except FileNotFoundError:
                os.mkdir(here, mode)
                made.append(here)
                st = os.lstat(here)
            if stat.S_ISLNK(st.st_mode):
                raise Unsafe(f"{here} is a symlink (to {os.readlink(here)})")
            if not stat.S_ISDIR(st.st_mode):
                raise Unsafe(f"{here} is not a folder")
        real, root = os.path.realpath(here), os.path.realpath(base)
        if os.path.commonpath([real, root]) != root:  # a component swapped under us
            raise Unsafe(f"{here} is not inside {base}")
    except (Unsafe, OSError):
        remove_empty(made)
        raise
    return here, made


def remove_empty(folders: list[Path] | tuple[Path, ...]) -> None:
    """Remove the folders this click made, deepest first, where they are empty."""
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def check_outputs(folder: Path, board_file: str) -> None:
    """:class:`Unsafe` when a file the click would overwrite is not its own to overwrite."""
    for name in output_names(board_file):
        path = folder / name
        if os.path.lexists(path) and not is_ours(path):
            raise Unsafe(f"{path} is not a file accel-drc wrote; it is not overwritten")
    lock = folder / LOCK_NAME
    if os.path.lexists(lock) and not stat.S_ISREG(os.lstat(lock).st_mode):
        raise Unsafe(f"{lock} is not a regular file")


def check_writable(folder: Path) -> None:
    """OSError unless a file can be made in ``folder`` (tried: a read-only disk or a folder of
    another user says no, whatever ``os.access`` thinks)."""
    fd, probe = tempfile.mkstemp(prefix=".accel-drc-probe-", dir=str(folder))
    os.close(fd)
    os.unlink(probe)


def cache_root() -> Path:
    """The per-user cache folder: ``$XDG_CACHE_HOME`` (when absolute, as the spec says), else
    ``%LOCALAPPDATA%`` on Windows, ``~/Library/Caches`` on macOS, ``~/.cache``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg)
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    return Path.home() / ".cache"


def user_folder(board_file: str) -> Path:
    """``<cache>/accel-drc/<board>-<12 hex of the board path's sha256>`` (``no-board`` when
    no board is open): one folder per board, the same on every click."""
    if not board_file:
        return cache_root() / REPORT_DIR / "no-board"
    real = os.path.realpath(board_file)
    digest = hashlib.sha256(real.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return cache_root() / REPORT_DIR / f"{Path(board_file).stem}-{digest}"


def _user_place(board_file: str, why: str) -> Place:
    """The per-user folder (a private temp folder when even that cannot be written), with a
    note saying why and where."""
    want = user_folder(board_file)
    try:
        want.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder, made = real_folders(want.parent, PurePath(want.name), mode=0o700)
        check_writable(folder)
        check_outputs(folder, board_file)
    except (Unsafe, OSError) as exc:
        log.warning("per-user report folder %s not usable: %s", want, exc)
        folder, made = Path(tempfile.mkdtemp(prefix="accel-drc-")), []
    note = f"{why}; this report is in {folder}." if why else ""
    return Place(folder, note, tuple(made))


def report_place(board_file: str, configured: str | None = None, origin: str = "") -> Place:
    """Where a click on ``board_file`` writes: ``report.dir`` (``configured``; ``accel-drc``
    when unset) inside the board's folder when that is safe and writable, else the per-user
    folder with a note.  ``origin`` names where ``report.dir`` was set (``file:line``) for the
    note.  Never raises for a folder that cannot be used: it falls back."""
    if not board_file:
        return _user_place(board_file, "")
    project = Path(board_file).parent
    try:
        rel = inside(configured)
        folder, made = real_folders(project, rel)
        try:
            check_writable(folder)
            check_outputs(folder, board_file)
        except (Unsafe, OSError):
            remove_empty(made)
            raise
    except Unsafe as exc:
        why = f"{origin}: {exc}" if origin and configured else str(exc)
        log.warning("report folder refused: %s", why)
        return _user_place(board_file, f"Not written in the project: {why}")
    except OSError as exc:
        why = f"{project} cannot be written ({exc.strerror or exc})"
        log.warning("report folder not writable: %s", why)
        return _user_place(board_file, f"Not written in the project: {why}")
    return Place(folder, "", tuple(made))


def write_page(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a new file of this click's own (``mkstemp``
    in the folder, never following a link) renamed over the name, which replaces a symlink
    there rather than writing through it.  Engine-free, for the error pages."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would make it
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process's umask (read by setting it: there is no getter before Python 3.13's)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
