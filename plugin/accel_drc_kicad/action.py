"""What the toolbar button does: extract → check → HTML report → browser → markers → selection.

KiCad discards a plugin's stdout and stderr, and the plugin venv has no GUI toolkit, so every
outcome reaches the user through things they can see: the report (or an error page in the same
place) opens in the default browser, the markers appear in the editor, and everything is logged
to ``accel-drc.log`` in the plugin's own directory.
"""

from __future__ import annotations

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
from typing import Any

from .connection import LiveError, board_path, connect, open_board
from .live_reader import Timer, read_live

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
    timings: dict[str, float] = field(default_factory=dict)


def report_settings(config: Any) -> tuple[str | None, str | None]:
    """(report dir, marker layer) from the project config, whatever shape H2's object has."""
    report = getattr(config, "report", None)
    data = getattr(config, "data", None)
    if report is None and isinstance(data, dict):
        report = data.get("report")
    if report is None and isinstance(config, dict):
        report = config.get("report")
    if report is None:
        return None, None
    if isinstance(report, dict):
        return report.get("dir"), report.get("marker_layer")
    return getattr(report, "dir", None), getattr(report, "marker_layer", None)


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


def run(open_browser: bool = True, kicad: Any = None) -> ActionResult:
    """One click.  Never raises: failures become an error page (opened) and ``ok=False``."""
    timer = Timer()
    t0 = time.perf_counter()
    result = ActionResult(ok=False)
    board_file = ""
    report_dir: Path | None = None
    try:
        if kicad is None:
            kicad = connect()
        board = open_board(kicad)
        board_file = board_path(board)
        result.board = board_file
        timer.lap("connect")

        # Load the rule packs and the config in a thread while the main thread waits for KiCad
        # to serialise the board: YAML parsing fills the time the socket would sit idle.
        with ThreadPoolExecutor(max_workers=1) as pool:
            engine = pool.submit(prepare_engine, board_file)
            live = read_live(kicad, board, timer=timer, warm=True)
            library, config = engine.result()
        timer.lap("config (after extraction)")
        configured_dir, marker_layer = report_settings(config)
        report_dir = report_dir_for(board_file, configured_dir)

        from accel_drc.pipeline import check_board, write_outputs
        from accel_drc.report import html as html_report

        check = check_board(live, config=config, board_file=board_file or None, library=library)
        timer.lap("check")

        report_dir.mkdir(parents=True, exist_ok=True)
        stem = Path(board_file).stem if board_file else "board"
        report = report_dir / f"{stem}.html"
        html_report.write(str(report), check, live)
        result.report = str(report)
        timer.lap("report")
        if open_browser:
            webbrowser.open(report.resolve().as_uri())
        timer.lap("browser")
        json_path = report_dir / f"{stem}.json"  # for CI and scripts; after the user's report
        write_outputs(check, live, json=str(json_path))
        result.json = str(json_path)
        timer.lap("json")

        from .markers import place_markers, select_items

        try:
            marks = place_markers(
                board, check.findings, layer_name=marker_layer, outline_bbox=live.outline.bbox
            )
            result.markers = asdict(marks)
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
                )
                if open_browser:
                    webbrowser.open(page.resolve().as_uri())
            except Exception:
                log.error("could not write the marker error page:\n%s", traceback.format_exc())
        timer.lap("markers")
        worst = worst_finding(check.findings)
        if worst is not None:
            try:
                result.selected = select_items(board, selection_uuids(worst, live))
            except Exception as exc:  # selection is a convenience; the report is what matters
                log.warning("could not select the worst finding's items: %s", exc)
        timer.lap("select")
        result.findings = len(check.findings)
        result.errors = len(check.unwaived_errors())
        result.ok = True
    except LiveError as exc:
        result.error = str(exc)
        log.error("%s", exc)
    except Exception as exc:
        from accel_drc.errors import AccelDrcError

        if isinstance(exc, AccelDrcError):  # bad config, pack or board: the message says where
            result.error = str(exc)
        else:
            result.error = f"{type(exc).__name__}: {exc}"
        log.error("accel-drc failed:\n%s", traceback.format_exc())
    result.timings = {k: round(v, 3) for k, v in timer.stages.items()}
    result.timings["total"] = round(time.perf_counter() - t0, 3)
    log.info("result: %s", json.dumps(asdict(result), default=str))
    if not result.ok:
        try:
            page = write_error_page(result.error, report_dir, board_file)
        except Exception:  # nowhere writable: the log has the message; never a traceback
            log.error("could not write the error page:\n%s", traceback.format_exc())
            return result
        result.report = str(page)
        if open_browser:
            webbrowser.open(page.resolve().as_uri())
    return result


def log_file() -> Path:
    """``accel-drc.log`` in the plugin's directory (KiCad runs us with it as the working dir)."""
    here = Path(__file__).resolve().parent.parent
    return here / "accel-drc.log"


def write_error_page(
    message: str,
    report_dir: Path | None,
    board_file: str,
    title: str = "accel-drc could not check the board",
) -> Path:
    """A small HTML page saying what went wrong and what to do; where the report would be."""
    if report_dir is None:
        report_dir = report_dir_for(board_file, None)
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(report_dir, os.W_OK):
            raise PermissionError(str(report_dir))
    except OSError:
        # a folder of our own (a fixed /tmp/accel-drc may belong to another user, or be a file)
        report_dir = Path(tempfile.mkdtemp(prefix="accel-drc-"))
    page = report_dir / "accel-drc-error.html"
    page.write_text(
        "<!doctype html><html lang='en'><meta charset='utf-8'><title>accel-drc: error</title>"
        "<body style='font-family:sans-serif;max-width:50em;margin:2em auto'>"
        f"<h1>{html.escape(title)}</h1>"
        f"<p><strong>{html.escape(message or 'unknown error')}</strong></p>"
        f"<p>Board: <code>{html.escape(board_file or '(none)')}</code></p>"
        f"<p>Details are in the log: <code>{html.escape(str(log_file()))}</code></p>"
        "<p>If the message is about the API server: in KiCad open Preferences &gt; Preferences "
        "&gt; Plugins, tick <em>Enable KiCad API</em>, restart the PCB editor and click the "
        "button again.</p></body></html>\n",
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


def main() -> int:
    """The entry point KiCad runs (via ``main.py``)."""
    setup_logging()
    log.info(
        "accel-drc plugin start (pid %d, socket %s)",
        os.getpid(),
        os.environ.get("KICAD_API_SOCKET"),
    )
    result = run(open_browser=os.environ.get("ACCEL_DRC_NO_BROWSER", "") == "")
    return 0 if result.ok else 1


__all__ = ["ActionResult", "main", "run"]
