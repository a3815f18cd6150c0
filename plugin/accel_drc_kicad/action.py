"""What the toolbar button does: extract → check → HTML report → browser → markers → selection.

KiCad discards a plugin's stdout and stderr, and the plugin venv has no GUI toolkit, so every
outcome reaches the user through things they can see: the report (or an error page in the same
place) opens in the default browser, the markers appear in the editor, and everything is logged
to ``accel-drc.log`` in the plugin's own directory.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import math
import os
import stat
import tempfile
import threading
import time
import traceback
import webbrowser
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .connection import LiveError, board_path, connect, open_board
from .fetch import Timer, start_requests
from .places import (
    LOCK_NAME,
    MARKER_ERROR_PAGE,
    Place,
    is_ours,
    remove_empty,
    report_place,
    write_page,
)

if TYPE_CHECKING:
    from accel_drc.config import ProjectConfig

log = logging.getLogger(__name__)


class BrowserOpen:
    """The report opened in the user's browser without waiting for the browser.

    ``webbrowser.open`` runs a ``$BROWSER`` that stays in the foreground (a text browser, a
    wrapper script) to its end: done in line, the markers appeared only after the browser was
    closed (65 s in issue #31).  So it runs on a thread of its own, the click goes on to the
    markers, and :meth:`outcome` says afterwards whether a browser took the page: ``False``
    (no browser, or it failed) is logged with the report's path, never swallowed."""

    def __init__(self, page: Path) -> None:
        self.page = page
        self.ok: bool | None = None
        self.error = ""
        self._thread = threading.Thread(target=self._open, name="accel-drc-browser", daemon=True)
        self._thread.start()

    def _open(self) -> None:
        try:
            self.ok = bool(webbrowser.open(self.page.resolve().as_uri()))
            if not self.ok:
                self.error = "no browser could be started (webbrowser found none)"
        except Exception as exc:  # a broken $BROWSER, a missing display
            self.ok = False
            self.error = f"{type(exc).__name__}: {exc}"

    def outcome(self, wait_s: float = 0.0) -> str:
        """``opened``, ``opening`` (the browser still runs in the foreground) or ``failed: …``
        (logged with where the page is), waiting at most ``wait_s`` for the answer."""
        self._thread.join(wait_s)
        if self.ok is None:
            return "opening"
        if self.ok:
            return "opened"
        log.error(
            "the report could not be opened in a browser (%s): open %s", self.error, self.page
        )
        return f"failed: {self.error}; the report is {self.page}"


@dataclass
class ActionResult:
    """What one click produced (the log and the tests read it)."""

    ok: bool
    board: str = ""
    report: str = ""
    json: str = ""
    error: str = ""
    findings: int = 0
    errors: int = 0
    markers: dict[str, Any] = field(default_factory=dict)
    selected: int = 0
    #: a second click while a run was in progress: nothing done (see :class:`RunLock`)
    ignored: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    #: whether the browser took the report (:meth:`BrowserOpen.outcome`); empty: not asked
    browser: str = ""
    #: CPU seconds of the process (all threads) per stage; "start": before :func:`run` (the
    #: interpreter and the imports)
    cpu: dict[str, float] = field(default_factory=dict)


def read_live(*args: Any, **kwargs: Any) -> Any:
    """:func:`.live_reader.read_live`, imported on first use: numpy and the engine's model load
    while KiCad already serialises the board for the requests :func:`run` sent first."""
    from .live_reader import read_live as _read_live

    return _read_live(*args, **kwargs)


def report_settings(config: ProjectConfig) -> tuple[str | None, str | None]:
    """(report dir, marker layer) from the project config's ``report:`` section."""
    return config.report.dir, config.report.marker_layer


def prepare_engine(board_file: str) -> tuple[Any, Any]:
    """(rule library, project config), loaded once (both the config and the check need the
    library), and the engine modules imported, so the check starts the moment the board is in."""
    from accel_drc.config import load_config
    from accel_drc.packs import load_library
    from accel_drc.pipeline import check_board  # noqa: F401 - import cost, off the main thread
    from accel_drc.report import html

    html.template()  # compiled now, not after the check
    library = load_library()
    return library, load_config(None, board_file or None, library=library)


#: a lock older than this is left over from a run that was killed (a click takes seconds); it
#: bounds the lock file's own age too, whatever the file says
LOCK_MAX_AGE_S = 600.0
#: how far in the future a lock's recorded start or its file time may be (clocks of two hosts
#: on a shared disk differ a little); further is garbage, which never blocks a click
LOCK_CLOCK_SKEW_S = 60.0
#: how long a lock whose content cannot be read yet is waited for (its run is writing it)
LOCK_WRITE_WAIT_S = 0.3


def _pid_alive(pid: int) -> bool | None:
    """Whether process ``pid`` runs (None: cannot tell on this platform)."""
    if pid <= 0:
        return False
    if os.name == "nt":
        try:
            import ctypes

            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
            handle = kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFORMATION
            if not handle:
                return False
            code = ctypes.c_ulong()
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
            kernel32.CloseHandle(handle)
            return code.value == 259  # STILL_ACTIVE
        except Exception:
            return None
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: no pid is that large
        return False
    except PermissionError:
        return True
    except OSError:
        return None
    return True


def _host() -> str:
    import socket

    try:
        return socket.gethostname()
    except OSError:
        return ""


def _recent(then: float, now: float) -> bool:
    """True when ``then`` (a time stamp) is a real time within the lock's life: finite, at most
    :data:`LOCK_MAX_AGE_S` ago and not further in the future than the clock skew allows."""
    return math.isfinite(then) and -LOCK_CLOCK_SKEW_S <= now - then <= LOCK_MAX_AGE_S


class RunLock:
    """A lock file in the board's default report folder (:func:`.places.report_place` without
    ``report.dir``: the lock is taken before the config that may name another folder is read): a
    second click while a run is checking the same board is ignored (a double-click ran the check
    twice and opened two browser tabs, issue 16).

    Created with ``O_EXCL`` (atomic on local disks).  A lock blocks only while it is believable
    (issue #30 item 8: a future or NaN start time blocked the button for good): its file and its
    recorded start are both recent (:func:`_recent`), its content parses, and its process, on
    this host, runs.  Anything else is left over from a killed run, or garbage, and taken over.
    ``owns_dir``: this click made the folder, so :meth:`release` removes it when left empty."""

    def __init__(self, path: Path, owns_dir: bool = False) -> None:
        self.path = path
        self.owns_dir = owns_dir
        self.held = False
        self.holder: dict[str, Any] = {}

    def acquire(self) -> bool:
        """True when this run may go on; False when another run holds the lock."""
        try:
            if not self.path.parent.is_dir():
                self.path.parent.mkdir(parents=True)
                self.owns_dir = True
        except OSError as exc:  # no report folder: the run will say so; no lock to take
            log.warning("no lock (%s): %s", self.path, exc)
            return True
        for _attempt in range(2):
            try:
                fd = os.open(str(self.path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if not self._regular():  # not ours to remove: run unlocked
                    log.warning("no lock: %s is not a regular file", self.path)
                    return True
                if self._stale():
                    log.info("taking over a stale lock %s (%s)", self.path, self.holder)
                    with contextlib.suppress(OSError):
                        self.path.unlink()
                    continue
                return False
            except OSError as exc:  # a read-only folder: run unlocked rather than not at all
                log.warning("no lock (%s): %s", self.path, exc)
                return True
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"pid": os.getpid(), "host": _host(), "started": time.time()}, fh)
            self.held = True
            return True
        return False

    def _regular(self) -> bool:
        try:
            return stat.S_ISREG(os.lstat(self.path).st_mode)
        except FileNotFoundError:
            return True  # gone since: the next attempt creates it
        except OSError:
            return False

    def _stale(self) -> bool:
        """Whether the lock in the way may be taken over (see the class)."""
        try:
            mtime = os.lstat(self.path).st_mtime
        except OSError:
            return True  # gone already
        if not _recent(mtime, time.time()):
            return True
        holder = self._read_holder()
        if holder is None:
            return True
        started, pid, host = holder
        if not _recent(started, time.time()) or pid <= 0:
            return True
        return host == _host() and _pid_alive(pid) is False

    def _read_holder(self) -> tuple[float, int, str] | None:
        """(start time, pid, host) the lock records; None when it does not parse, after
        waiting :data:`LOCK_WRITE_WAIT_S` for a run that is writing it this instant."""
        deadline = time.monotonic() + LOCK_WRITE_WAIT_S
        while True:
            try:
                holder = json.loads(self.path.read_text(encoding="utf-8"))
                self.holder = holder
                return float(holder["started"]), int(holder["pid"]), str(holder.get("host", ""))
            except (OSError, ValueError, TypeError, KeyError, AttributeError, OverflowError):
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.05)

    def release(self) -> None:
        """Remove the lock, and its folder when this click made it and the lock was all it
        held (a config whose ``report.dir`` names another folder leaves no empty
        ``accel-drc/`` behind; a folder the user made stays)."""
        if self.held:
            with contextlib.suppress(OSError):
                self.path.unlink()
            if self.owns_dir:
                remove_empty([self.path.parent])
            self.held = False


def _relative(path: Path, board_file: str) -> str:
    """``path`` as the user finds it from the board's folder (absolute when elsewhere)."""
    if board_file:
        try:
            return path.resolve().relative_to(Path(board_file).resolve().parent).as_posix()
        except ValueError:
            pass
    return str(path)


class KiCadMeanwhile:
    """The click's requests that need no findings, sent on a thread of their own while this
    process checks the board, so KiCad works while the engine does: the last click's KiCad 10
    DRC markers are deleted (:func:`.markers.remove_previous_drc`; one commit that took KiCad
    0.1-0.4 s on vme-wren after the report) and the marker layer and KiCad's version for the
    report's banner are asked (:func:`.markers.resolve_layer_name`; two round trips that sat
    between the check and the report).

    The connection carries one request at a time: the caller uses it again only after
    :meth:`close` (or after the answer it waits for: the thread has nothing else to send)."""

    def __init__(self, kicad: Any, board: Any, marker_layer: str | None) -> None:
        from .markers import remove_previous_drc, resolve_layer_name

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kicad-meanwhile")
        self._removed = self._pool.submit(remove_previous_drc, board)
        self._layer = self._pool.submit(resolve_layer_name, kicad, board, marker_layer)

    def layer(self) -> tuple[str, bool]:
        """(marker layer name, KiCad 10 or newer), as :func:`.markers.resolve_layer_name`
        answers (its error raised here)."""
        return self._layer.result()

    def removed(self) -> int:
        """How many of the last click's DRC markers KiCad deleted (0 if that failed: logged)."""
        try:
            return self._removed.result()
        except Exception as exc:
            log.warning("the last click's DRC markers were not removed: %s", exc)
            return 0

    def close(self) -> None:
        """Wait for the requests in flight: the connection is the caller's again."""
        self._pool.shutdown(wait=True)


def run(open_browser: bool = True, kicad: Any = None) -> ActionResult:
    """One click.  Never raises: failures become an error page (opened) and ``ok=False``."""
    timer = Timer()
    t0 = time.perf_counter()
    result = ActionResult(ok=False)
    board_file = ""
    place: Place | None = None
    board: Any = None
    lock: RunLock | None = None
    meanwhile: KiCadMeanwhile | None = None
    hint = ""
    try:
        if kicad is None:
            kicad = connect()
        board = open_board(kicad)
        board_file = board_path(board)
        result.board = board_file
        home = report_place(board_file)  # the default folder (the config is not read yet)
        lock = RunLock(home.dir / LOCK_NAME, owns_dir=home.dir in home.created)
        place = home  # where a failure before the config's folder is known is reported
        if not lock.acquire():
            result.ignored = True
            result.error = (
                f"another accel-drc run (pid {lock.holder.get('pid', '?')}) is checking this "
                "board; this click was ignored"
            )
            log.info("%s", result.error)
            return result
        timer.lap("connect")

        # The board's bulk requests go out first (KiCad serialises the zones while this
        # process is still importing numpy and the engine); the rule packs and the config load
        # in a thread while the main thread parses what KiCad sends.
        requests = start_requests(board)
        try:
            with ThreadPoolExecutor(max_workers=1) as pool:
                engine = pool.submit(prepare_engine, board_file)
                live = read_live(kicad, board, timer=timer, warm=True, requests=requests)
                library, config = engine.result()
        finally:
            requests.close()
        timer.lap("config (after extraction)")
        configured_dir, marker_layer = report_settings(config)
        if configured_dir:
            place = report_place(board_file, configured_dir, _origin(config, "report", "dir"))
        report_dir = place.dir
        meanwhile = KiCadMeanwhile(kicad, board, marker_layer)

        from accel_drc.pipeline import check_board
        from accel_drc.report import html as html_report
        from accel_drc.report.writers import write_outputs

        html_report.prepare(live)  # the report's board view: on another core during the check
        check = check_board(live, config=config, board_file=board_file or None, library=library)
        timer.lap("check")

        from .markers import clear_selection, place_markers, plan_markers

        stem = Path(board_file).stem if board_file else "board"
        report = report_dir / f"{stem}.html"
        # the markers are placed after the report (it opens sooner), but planned now so the
        # report's banner says how many go where
        plan = plan_markers(check.findings, live.outline.bbox, _relative(report, board_file))
        layer_name, kicad10 = meanwhile.layer()
        note = " ".join(x for x in (place.note, plan.summary(layer_name, kicad10)) if x)
        html_report.write(str(report), check, live, editor_note=note)
        result.report = str(report)
        timer.lap("report")
        browser = BrowserOpen(report) if open_browser else None  # never waits on the browser
        timer.lap("browser")
        json_path = report_dir / f"{stem}.json"  # for CI and scripts; after the user's report
        write_outputs(check, live, json=str(json_path))
        result.json = str(json_path)
        timer.lap("json")

        try:
            marks = place_markers(
                board,
                check.findings,
                layer_name=marker_layer,
                outline_bbox=live.outline.bbox,
                plan=plan,
                removed_before=meanwhile.removed(),
            )
            result.markers = _marker_dict(marks)
            _remove_ours(report_dir / MARKER_ERROR_PAGE)  # an earlier click's marker failure
        except Exception as exc:  # the report is already open: markers failing must not hide it
            log.error("could not place markers:\n%s", traceback.format_exc())
            result.markers = {"mode": "failed", "error": f"{type(exc).__name__}: {exc}"}
            # …but the user must hear of it: a page beside the report says what failed
            try:
                page = write_error_page(
                    f"The report is complete ({report.name}), but the markers could not be "
                    f"placed in the editor: {type(exc).__name__}: {exc}",
                    place,
                    board_file,
                    title="accel-drc could not mark the board",
                    name=MARKER_ERROR_PAGE,
                )
                if open_browser:
                    BrowserOpen(page)
            except Exception:
                log.error("could not write the marker error page:\n%s", traceback.format_exc())
        timer.lap("markers")
        # nothing stays selected (issue #31: with the worst finding's items selected too,
        # Delete "to clear the markers" deleted the GND plane's zone; with the markers alone
        # KiCad 9 kept saying "Selected Items 67"); the user's earlier selection goes too
        try:
            result.selected = clear_selection(board)
        except Exception as exc:  # selection is a convenience; the report is what matters
            log.warning("could not select the markers: %s", exc)
        timer.lap("select")
        result.findings = len(check.findings)
        result.errors = len(check.unwaived_errors())
        if browser is not None:
            result.browser = browser.outcome(wait_s=0.5)
        result.ok = True
    except LiveError as exc:
        result.error = str(exc)
        hint = API_HINT
        log.error("%s", exc)
    except Exception as exc:
        from accel_drc.errors import AccelDrcError, InputError

        if isinstance(exc, AccelDrcError):  # bad config, pack or board: the message says where
            result.error = str(exc)
            if isinstance(exc, InputError):
                hint = (
                    "Fix the file at the line named above, save it and click the button again "
                    "(<code>accel-drc check</code> on the board file shows the same message)."
                )
        else:
            result.error = f"{type(exc).__name__}: {exc}"
        log.error("accel-drc failed:\n%s", traceback.format_exc())
    if meanwhile is not None:
        meanwhile.close()  # before _finish talks to KiCad
    try:
        _finish(result, open_browser, board, board_file, place, hint, timer, t0)
    finally:
        if lock is not None:
            lock.release()
    return result


def _finish(
    result: ActionResult,
    open_browser: bool,
    board: Any,
    board_file: str,
    place: Place | None,
    hint: str,
    timer: Timer,
    t0: float,
) -> None:
    """Log the result; after a failure write the error page where the report would be, mark
    the previous run's markers stale and select them (so the editor shows the failure too)."""
    result.timings = {k: round(v, 3) for k, v in timer.stages.items()}
    result.timings["total"] = round(time.perf_counter() - t0, 3)
    result.cpu = {"start": round(timer.cpu_start, 3)}
    result.cpu.update({k: round(v, 3) for k, v in timer.cpu.items()})
    result.cpu["total"] = round(time.process_time(), 3)
    if result.ok:
        log.info("result: %s", json.dumps(asdict(result), default=str))
        return
    page: Path | None = None
    try:
        stem = Path(board_file).stem if board_file else ""
        page = write_error_page(
            result.error,
            place,
            board_file,
            hint=hint,
            name=f"{stem}.html" if stem else MARKER_ERROR_PAGE,
        )
        result.report = str(page)
        if stem:  # the previous run's JSON no longer describes the board either
            _remove_ours(page.parent / f"{stem}.json")
            _remove_ours(page.parent / MARKER_ERROR_PAGE)
    except Exception:  # nowhere writable: the log has the message; never a traceback
        log.error("could not write the error page:\n%s", traceback.format_exc())
    if board is not None:
        from .markers import clear_selection, mark_stale

        try:
            where = _relative(page, board_file) if page is not None else str(log_file())
            stale = mark_stale(board, where)
            result.markers = _marker_dict(stale)
            result.selected = clear_selection(board)
        except Exception as exc:
            log.warning("could not mark the previous markers stale: %s", exc)
    if page is not None and open_browser:
        result.browser = BrowserOpen(page).outcome(wait_s=0.5)
    log.info("result: %s", json.dumps(asdict(result), default=str))


def _marker_dict(marks: Any) -> dict[str, Any]:
    """The marker result for the JSON/log (without the item ids, which only the selection
    needs)."""
    d = asdict(marks)
    d.pop("ids", None)
    return d


def _remove_ours(path: Path) -> None:
    """Remove an earlier accel-drc output (a report, JSON or error page, recognised by its
    content, never through a symlink): a click removes nothing it did not write."""
    if not is_ours(path):
        if os.path.lexists(path):
            log.warning("not removed (not an accel-drc output): %s", path)
        return
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove %s: %s", path, exc)


def _origin(config: Any, *where: str) -> str:
    """``file:line`` of a config setting, for messages (``file`` alone without a line)."""
    path = getattr(config, "path", None) or ""
    try:
        line = config.line_of(*where)
    except Exception:
        line = None
    return f"{path}:{line}" if path and line else path


def log_file() -> Path:
    """``accel-drc.log`` in the plugin's directory (KiCad runs us with it as the working dir)."""
    here = Path(__file__).resolve().parent.parent
    return here / "accel-drc.log"


#: shown on the error page only when the plugin could not reach KiCad (from a terminal: the
#: button itself is gone while the API server is off)
API_HINT = (
    "If KiCad is running with the board open, its API server may be off: in KiCad open "
    "Preferences &gt; Preferences &gt; Plugins, tick <em>Enable KiCad API</em>, restart KiCad "
    "and run again."
)


def write_error_page(
    message: str,
    place: Place | None,
    board_file: str,
    title: str = "accel-drc could not check the board",
    hint: str = "",
    name: str = MARKER_ERROR_PAGE,
) -> Path:
    """A small HTML page saying what went wrong and what to do.  A failed run writes it where
    the report would be (``accel-drc/<board>.html``: a browser tab showing the last report shows
    the failure on reload; see :func:`.places.report_place`, which also says when that is the
    per-user folder); ``hint`` is trusted HTML (our own text)."""
    if place is None:
        place = report_place(board_file)
    page = place.dir / name
    write_page(
        page,
        "<!doctype html><html lang='en'><meta charset='utf-8'><title>accel-drc: error</title>"
        "<body style='font-family:sans-serif;max-width:50em;margin:2em auto'>"
        f"<h1>{html.escape(title)}</h1>"
        f"<p><strong>{html.escape(message or 'unknown error')}</strong></p>"
        + (f"<p>{hint}</p>" if hint else "")
        + (f"<p>{html.escape(place.note)}</p>" if place.note else "")
        + f"<p>Board: <code>{html.escape(board_file or '(none)')}</code></p>"
        f"<p>Details are in the log: <code>{html.escape(str(log_file()))}</code></p>"
        "</body></html>\n",
    )
    return page


def setup_logging(path: Path | None = None) -> Path:
    """Log to the plugin's directory (fall back to the temp dir if it is read-only)."""
    path = path or log_file()
    try:
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        path = Path(tempfile.gettempdir()) / "accel-drc.log"
        handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def use_shipped_dataclass_code() -> None:
    """This process is ours, as ``accel-drc``'s is: let ``dataclasses`` use the engine's
    precompiled methods (:mod:`accel_drc.dccode`, what the command line installs) instead of
    compiling a few hundred generated functions at import.  Before the engine is imported; a
    no-op where the engine has no such table."""
    try:
        from accel_drc import dccode
    except ImportError:
        return
    try:
        dccode.install()
    except Exception as exc:  # only a start-up speed-up
        log.debug("shipped dataclass code not used: %s", exc)
    try:
        from accel_drc.concurrency import one_blas_thread

        one_blas_thread()  # BLAS on one thread, as the command line has it
    except ImportError:
        pass


def main() -> int:
    """The entry point KiCad runs (via ``main.py``)."""
    use_shipped_dataclass_code()
    setup_logging()
    log.info(
        "accel-drc plugin start (pid %d, socket %s)",
        os.getpid(),
        os.environ.get("KICAD_API_SOCKET"),
    )
    result = run(open_browser=os.environ.get("ACCEL_DRC_NO_BROWSER", "") == "")
    return 0 if result.ok or result.ignored else 1


__all__ = ["ActionResult", "main", "run"]
