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
import os
import re
import tempfile
import time
import traceback
import webbrowser
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .connection import LiveError, board_path, connect, open_board
from .fetch import Timer, start_requests

if TYPE_CHECKING:
    from accel_drc.config import ProjectConfig

log = logging.getLogger(__name__)

REPORT_DIR = "accel-drc"


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


def report_dir_for(board_file: str, configured: str | None) -> Path:
    """``accel-drc/`` beside the board (or the configured dir, relative to the board's dir);
    a board never saved has no directory, so the temp dir."""
    base = Path(board_file).parent if board_file else Path(tempfile.gettempdir())
    d = Path(configured) if configured else Path(REPORT_DIR)
    return d if d.is_absolute() else base / d


def worst_finding(findings: Any) -> Any:
    """The finding to select: first unwaived error violation with items, else any with items."""
    from .markers import marker_findings

    for f in marker_findings(findings):
        if f.items:
            return f
    return None


_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
#: selecting tens of thousands of items makes the editor crawl; a net's first items suffice
MAX_SELECTED = 2000


def selection_uuids(finding: Any, board: Any) -> list[str]:
    """What to select for a finding: its item uuids, and for a net it names (a PDN rail, a
    diff pair) that net's tracks, vias and pads."""
    out: list[str] = []
    nets: set[int] = set()
    for item in finding.items:
        if _UUID.match(item):
            out.append(item)
        elif item in board.net_index:
            nets.add(board.net_index[item])
    if finding.net and finding.net in board.net_index and not out:
        nets.add(board.net_index[finding.net])
    if nets:
        for uuids, net in (
            (board.tracks.uuid, board.tracks.net),
            (board.vias.uuid, board.vias.net),
        ):
            out += [u for u, n in zip(uuids, net.tolist()) if n in nets]
        out += [pad.uuid for _fp, pad in board.pads if pad.net in nets and pad.uuid]
    return list(dict.fromkeys(out))[:MAX_SELECTED]


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


#: the lock file that makes a second click during a run do nothing (in the report folder)
LOCK_NAME = ".accel-drc.lock"
#: a lock older than this is left over from a run that was killed (a click takes seconds)
LOCK_MAX_AGE_S = 600.0
#: the page a failed marker commit leaves beside a complete report (removed by the next
#: successful click, as is the page of a failed run from before pages went to the report's place)
MARKER_ERROR_PAGE = "accel-drc-error.html"


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
    except ProcessLookupError:
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


class RunLock:
    """A lock file in the board's default report folder (``accel-drc/`` beside it: the lock is
    taken before the config that may name another folder is read): a second click while a run
    is checking the same board is ignored (a double-click ran the check twice and opened two
    browser tabs, issue 16).

    Created with ``O_EXCL`` (atomic on local disks); a lock whose process is gone, or older than
    :data:`LOCK_MAX_AGE_S`, is left over from a killed run and taken over."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held = False
        self.holder: dict[str, Any] = {}

    def acquire(self) -> bool:
        """True when this run may go on; False when another run holds the lock."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # no report folder: the run will say so; no lock to take
            log.warning("no lock (%s): %s", self.path, exc)
            return True
        for _attempt in range(2):
            try:
                fd = os.open(str(self.path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
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

    def _stale(self) -> bool:
        try:
            self.holder = json.loads(self.path.read_text(encoding="utf-8"))
            started = float(self.holder.get("started", 0))
            pid = int(self.holder.get("pid", 0))
            host = str(self.holder.get("host", ""))
        except (OSError, ValueError, TypeError, AttributeError):
            # being written this instant, or garbage: garbage older than the limit is stale
            try:
                return time.time() - self.path.stat().st_mtime > LOCK_MAX_AGE_S
            except OSError:
                return True  # gone already
        if time.time() - started > LOCK_MAX_AGE_S:
            return True
        return host == _host() and _pid_alive(pid) is False

    def release(self) -> None:
        """Remove the lock, and its folder when the lock was all it held (a config whose
        ``report.dir`` names another folder leaves no empty ``accel-drc/`` behind)."""
        if self.held:
            with contextlib.suppress(OSError):
                self.path.unlink()
            with contextlib.suppress(OSError):
                self.path.parent.rmdir()  # only succeeds on an empty folder
            self.held = False


def _relative(path: Path, board_file: str) -> str:
    """``path`` as the user finds it from the board's folder (absolute when elsewhere)."""
    if board_file:
        try:
            return path.resolve().relative_to(Path(board_file).resolve().parent).as_posix()
        except ValueError:
            pass
    return str(path)


def run(open_browser: bool = True, kicad: Any = None) -> ActionResult:
    """One click.  Never raises: failures become an error page (opened) and ``ok=False``."""
    timer = Timer()
    t0 = time.perf_counter()
    result = ActionResult(ok=False)
    board_file = ""
    report_dir: Path | None = None
    board: Any = None
    lock: RunLock | None = None
    hint = ""
    try:
        if kicad is None:
            kicad = connect()
        board = open_board(kicad)
        board_file = board_path(board)
        result.board = board_file
        lock = RunLock(report_dir_for(board_file, None) / LOCK_NAME)
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
        report_dir = report_dir_for(board_file, configured_dir)

        from accel_drc.pipeline import check_board, write_outputs
        from accel_drc.report import html as html_report

        check = check_board(live, config=config, board_file=board_file or None, library=library)
        timer.lap("check")

        from .markers import place_markers, plan_markers, resolve_layer_name, select_items

        report_dir.mkdir(parents=True, exist_ok=True)
        stem = Path(board_file).stem if board_file else "board"
        report = report_dir / f"{stem}.html"
        # the markers are placed after the report (it opens sooner), but planned now so the
        # report's banner says how many go where
        plan = plan_markers(check.findings, live.outline.bbox, _relative(report, board_file))
        layer_name, kicad10 = resolve_layer_name(kicad, board, marker_layer)
        html_report.write(str(report), check, live, editor_note=plan.summary(layer_name, kicad10))
        result.report = str(report)
        timer.lap("report")
        if open_browser:
            webbrowser.open(report.resolve().as_uri())
        timer.lap("browser")
        json_path = report_dir / f"{stem}.json"  # for CI and scripts; after the user's report
        write_outputs(check, live, json=str(json_path))
        result.json = str(json_path)
        timer.lap("json")

        marker_ids: tuple[str, ...] = ()
        try:
            marks = place_markers(
                board,
                check.findings,
                layer_name=marker_layer,
                outline_bbox=live.outline.bbox,
                plan=plan,
            )
            result.markers = _marker_dict(marks)
            marker_ids = marks.ids
            _remove(report_dir / MARKER_ERROR_PAGE)  # an earlier click's marker failure
        except Exception as exc:  # the report is already open: markers failing must not hide it
            log.error("could not place markers:\n%s", traceback.format_exc())
            result.markers = {"mode": "failed", "error": f"{type(exc).__name__}: {exc}"}
            # …but the user must hear of it: a page beside the report says what failed
            try:
                page = write_error_page(
                    f"The report is complete ({report.name}), but the markers could not be "
                    f"placed in the editor: {type(exc).__name__}: {exc}",
                    report_dir,
                    board_file,
                    title="accel-drc could not mark the board",
                    name=MARKER_ERROR_PAGE,
                )
                if open_browser:
                    webbrowser.open(page.resolve().as_uri())
            except Exception:
                log.error("could not write the marker error page:\n%s", traceback.format_exc())
        timer.lap("markers")
        # the editor shows what the click did: the markers, and the worst finding's items
        worst = worst_finding(check.findings)
        wanted = list(marker_ids)
        if worst is not None:
            wanted += selection_uuids(worst, live)
        if wanted:
            try:
                result.selected = select_items(board, wanted[:MAX_SELECTED])
            except Exception as exc:  # selection is a convenience; the report is what matters
                log.warning("could not select the markers and the worst finding: %s", exc)
        timer.lap("select")
        result.findings = len(check.findings)
        result.errors = len(check.unwaived_errors())
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
    try:
        _finish(result, open_browser, board, board_file, report_dir, hint, timer, t0)
    finally:
        if lock is not None:
            lock.release()
    return result


def _finish(
    result: ActionResult,
    open_browser: bool,
    board: Any,
    board_file: str,
    report_dir: Path | None,
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
            report_dir,
            board_file,
            hint=hint,
            name=f"{stem}.html" if stem else MARKER_ERROR_PAGE,
        )
        result.report = str(page)
        if stem:  # the previous run's JSON no longer describes the board either
            _remove(page.parent / f"{stem}.json")
            _remove(page.parent / MARKER_ERROR_PAGE)
    except Exception:  # nowhere writable: the log has the message; never a traceback
        log.error("could not write the error page:\n%s", traceback.format_exc())
    if board is not None:
        from .markers import mark_stale, select_items

        try:
            where = _relative(page, board_file) if page is not None else str(log_file())
            stale = mark_stale(board, where)
            result.markers = _marker_dict(stale)
            if stale.ids:
                result.selected = select_items(board, list(stale.ids))
        except Exception as exc:
            log.warning("could not mark the previous markers stale: %s", exc)
    log.info("result: %s", json.dumps(asdict(result), default=str))
    if page is not None and open_browser:
        webbrowser.open(page.resolve().as_uri())


def _marker_dict(marks: Any) -> dict[str, Any]:
    """The marker result for the JSON/log (without the item ids, which only the selection
    needs)."""
    d = asdict(marks)
    d.pop("ids", None)
    return d


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove %s: %s", path, exc)


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
    report_dir: Path | None,
    board_file: str,
    title: str = "accel-drc could not check the board",
    hint: str = "",
    name: str = MARKER_ERROR_PAGE,
) -> Path:
    """A small HTML page saying what went wrong and what to do.  A failed run writes it where
    the report would be (``accel-drc/<board>.html``: a browser tab showing the last report shows
    the failure on reload); ``hint`` is trusted HTML (our own text)."""
    if report_dir is None:
        report_dir = report_dir_for(board_file, None)
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(report_dir, os.W_OK):
            raise PermissionError(str(report_dir))
    except OSError:
        # a folder of our own (a fixed /tmp/accel-drc may belong to another user, or be a file)
        report_dir = Path(tempfile.mkdtemp(prefix="accel-drc-"))
    page = report_dir / name
    page.write_text(
        "<!doctype html><html lang='en'><meta charset='utf-8'><title>accel-drc: error</title>"
        "<body style='font-family:sans-serif;max-width:50em;margin:2em auto'>"
        f"<h1>{html.escape(title)}</h1>"
        f"<p><strong>{html.escape(message or 'unknown error')}</strong></p>"
        + (f"<p>{hint}</p>" if hint else "")
        + f"<p>Board: <code>{html.escape(board_file or '(none)')}</code></p>"
        f"<p>Details are in the log: <code>{html.escape(str(log_file()))}</code></p>"
        "</body></html>\n",
        encoding="utf-8",
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
