"""Start a real KiCad PCB editor with its IPC API server, headless under Xvfb, for live tests.

KiCad 9/10 have no headless API server: the only way to talk to a live board is the GUI editor.
This helper follows the recipe in domain.md §7: a scratch ``KICAD_CONFIG_HOME`` whose
``kicad_common.json`` turns the API server on (so the user's own KiCad settings are never read
or written), scratch ``HOME``/``XDG_*``/``TMPDIR`` (the socket lands in ``$TMPDIR/kicad/``, so
two KiCads never share one), ``xvfb-run -a pcbnew BOARD``, then poll the socket until the board
answers.  A board KiCad cannot load leaves a modal dialog and an empty editor, so readiness
means "the open document is *our* board", not just "the socket answers".

The board is copied into the scratch directory (with its ``.kicad_pro``/``.kicad_dru``) because
the tests write markers and save; the fixture files stay untouched.

``version="10"`` runs KiCad 10.0.7 from its Debian sid chroot (:mod:`kicad10`) instead of the
host's KiCad 9: the scratch directory is bind-mounted into the chroot at the same path, so the
board path KiCad reports, the API socket and the plugin folder are valid on the host as they are,
and the host's kipy and plugin talk to it unchanged.  KiCad 10 shows a first-run "KiCad Setup"
wizard (a modal dialog that blocks the API) unless its settings folder is valid, its global
library tables exist and the update / data-collection prompts are answered: :meth:`_prepare`
writes all of that.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

#: KiCad's settings version directory under KICAD_CONFIG_HOME
SETTINGS_VERSION = "9.0"
#: the KiCad versions the harness runs: "9" on the host, "10" in the sid chroot
VERSIONS = ("9", "10")
#: KiCad 10's first-run wizard shows unless these prompts are marked as answered
#: (``STARTWIZARD_PROVIDER_PRIVACY::NeedsUserInput``)
NO_WIZARD = {"do_not_show_again": {"update_check_prompt": True, "data_collection_prompt": True}}
#: the global library tables KiCad 10's wizard asks for when one is missing
#: (``STARTWIZARD_PROVIDER_LIBRARIES``); KiCad 9 reads the first two
LIB_TABLES = ("fp-lib-table", "sym-lib-table", "design-block-lib-table")


class KiCadNotReady(RuntimeError):
    """KiCad did not come up with the board within the timeout (the log says why)."""


class LiveKiCad:
    """One ``pcbnew`` process with one board open, stopped by its own process group id."""

    def __init__(
        self,
        board: Path,
        workdir: Path,
        extra_config: dict[str, Any] | None = None,
        extra_env: dict[str, str] | None = None,
        screen: str | None = None,
        version: str = "9",
        link_board: bool = False,
    ):
        if version not in VERSIONS:
            raise ValueError(f"KiCad version {version!r} is not one of {VERSIONS}")
        #: "9" (the host's pcbnew) or "10" (pcbnew in the KiCad 10 chroot)
        self.version = version
        self.source_board = Path(board)
        self.workdir = Path(workdir)
        self.board_dir = self.workdir / "board"
        self.board = self.board_dir / self.source_board.name
        self.tmp = self.workdir / "tmp"
        self.config = self.workdir / "config"
        self.home = self.workdir / "home"
        self.log = self.workdir / "kicad.log"
        self.extra_config = extra_config or {}
        self.extra_env = extra_env or {}
        #: Xvfb's screen, e.g. "1600x1000x24" for screenshots (xvfb-run's default is 640x480x8)
        self.screen = screen
        #: symlink the board instead of copying it (the 69 MB vme-wren is never copied)
        self.link_board = link_board
        self.proc: subprocess.Popen[bytes] | None = None

    # -- paths ---------------------------------------------------------------------------------

    @property
    def socket(self) -> str:
        return f"ipc://{self.tmp / 'kicad' / 'api.sock'}"

    @property
    def settings_version(self) -> str:
        """KiCad's settings folder name under ``KICAD_CONFIG_HOME`` ("9.0", "10.0")."""
        return f"{self.version}.0"

    def env(self) -> dict[str, str]:
        """The environment KiCad runs in; also what a plugin subprocess should see."""
        host_path = os.environ.get("PATH", "/usr/bin:/bin")
        env = {
            "PATH": host_path if self.version == "9" else "/usr/bin:/bin",
            "HOME": str(self.home),
            "KICAD_CONFIG_HOME": str(self.config),
            "XDG_CONFIG_HOME": str(self.workdir / "xdg_config"),
            "XDG_DATA_HOME": str(self.workdir / "xdg_data"),
            "XDG_CACHE_HOME": str(self.workdir / "xdg_cache"),
            "XDG_STATE_HOME": str(self.workdir / "xdg_state"),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            # KiCad's API trace (plugin loading, venv jobs, action runs) into kicad.log
            "KICAD_ENABLE_WXTRACE": "1",
            "WXTRACE": "KICAD_API",
        }
        env.update(self.extra_env)
        return env

    def _prepare(self) -> None:
        for d in (
            self.board_dir,
            self.tmp,
            self.home,
            self.config / self.settings_version,
            self.workdir / "xdg_config",
            self.workdir / "xdg_data",
            self.workdir / "xdg_cache",
            self.workdir / "xdg_state",
        ):
            d.mkdir(parents=True, exist_ok=True)
        stem = self.source_board.stem
        for sibling in self.source_board.parent.iterdir():
            if sibling.stem == stem and sibling.suffix in (
                ".kicad_pcb",
                ".kicad_pro",
                ".kicad_dru",
            ):
                dest = self.board_dir / sibling.name
                if self.link_board:
                    if not dest.is_symlink():
                        dest.symlink_to(sibling.resolve())
                    continue
                shutil.copyfile(sibling, dest)
                dest.chmod(0o644)
        common: dict[str, Any] = {
            "api": {"enable_server": True, "interpreter_path": "/usr/bin/python3"},
            **NO_WIZARD,
        }
        common.update(self.extra_config.get("kicad_common", {}))
        cfg = self.config / self.settings_version
        (cfg / "kicad_common.json").write_text(json.dumps(common), encoding="utf-8")
        for table in LIB_TABLES:
            (cfg / table).write_text(f"({table.replace('-', '_')}\n)\n", encoding="utf-8")

    # -- lifecycle -----------------------------------------------------------------------------

    def command(self) -> list[str]:
        """``xvfb-run … pcbnew BOARD``, inside the chroot for KiCad 10 (after mounting what
        it needs and binding the scratch directory at the same path)."""
        xvfb = ["xvfb-run", "-a"]
        if self.screen:
            xvfb += ["-s", f"-screen 0 {self.screen}"]
        cmd = [*xvfb, "pcbnew", str(self.board)]
        if self.version == "9":
            return cmd
        import kicad10

        kicad10.ensure_mounts()
        kicad10.bind_same_path(self.workdir)
        return kicad10.chroot_command(cmd)

    def start(self, timeout_s: float = 240.0) -> LiveKiCad:
        self._prepare()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                self.command(),
                env=self.env(),
                cwd=str(self.board_dir),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # own process group: stop() ends pcbnew and Xvfb together
            )
        self.wait_ready(timeout_s)
        return self

    def wait_ready(self, timeout_s: float) -> None:
        """Poll until the API answers with our board open (the socket appears long before)."""
        from kipy import KiCad

        deadline = time.monotonic() + timeout_s
        last = "socket not created yet"
        sock_file = self.tmp / "kicad" / "api.sock"
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise KiCadNotReady(f"KiCad exited with {self.proc.returncode}: {self._tail()}")
            if sock_file.exists():
                try:
                    kicad = KiCad(socket_path=self.socket, timeout_ms=5000)
                    board = kicad.get_board()
                    if board.name == self.board.name:
                        board.get_nets()
                        return
                    last = f"open board is {board.name!r}, not {self.board.name!r}"
                except Exception as exc:  # not ready / busy / no board yet: keep polling
                    last = f"{type(exc).__name__}: {exc}"
            time.sleep(0.5)
        self.stop()
        raise KiCadNotReady(f"KiCad not ready after {timeout_s:.0f} s ({last}): {self._tail()}")

    def display_env(self) -> dict[str, str]:
        """DISPLAY and XAUTHORITY of the X server xvfb-run started (read from pcbnew's
        environment), for screenshots."""
        if self.proc is None:
            raise KiCadNotReady("KiCad is not running")
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if os.getsid(int(proc.name)) != self.proc.pid:
                    continue
                if (proc / "comm").read_text().strip() != "pcbnew":
                    continue
                env = (proc / "environ").read_bytes().split(b"\0")
            except (OSError, ProcessLookupError):
                continue
            found = {}
            for item in env:
                key, _, value = item.decode(errors="replace").partition("=")
                if key in ("DISPLAY", "XAUTHORITY"):
                    found[key] = value
            if "DISPLAY" in found:
                return found
        raise KiCadNotReady("no pcbnew process with a DISPLAY in KiCad's session")

    def _tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """End KiCad (and Xvfb) and remove the board's lock file the killed KiCad leaves
        behind: KiCad 9 started again on the board would otherwise stop at a modal "file is
        already open" dialog, and the API would never answer."""
        try:
            self._stop_process()
            (self.board_dir / f"~{self.board.name}.lck").unlink(missing_ok=True)
        finally:
            if self.version != "9":
                import kicad10

                kicad10.unbind(self.workdir)

    def _stop_process(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        self.proc = None

    def __enter__(self) -> LiveKiCad:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- KiCad 10's DRC markers, seen through the API ---------------------------------------------
# kicad-python 0.8 cannot unpack a DRC marker (KiCad 10 sends it as an empty ``Any``) and
# ``GetItems`` refuses the marker type, so the tests count markers through raw selection calls.


def raw_selection(board: Any) -> tuple[int, set[str]]:
    """(how many items the editor has selected, the ids of those kicad-python can unpack:
    every selected item that is not a DRC marker)."""
    from kipy.board_types import unwrap
    from kipy.proto.common.commands import editor_commands_pb2 as ec

    cmd = ec.GetSelection()
    cmd.header.document.CopyFrom(board.document)
    items = list(board.client.send(cmd, ec.SelectionResponse).items)
    known = {unwrap(i).id.value for i in items if i.type_url and i.value}
    return len(items), known


def live_markers(board: Any, ids: list[str] | set[str] | tuple[str, ...]) -> int:
    """How many of the DRC markers ``ids`` are on the board now (KiCad selects only items it
    has); the selection is cleared afterwards."""
    from kipy.proto.common.commands import editor_commands_pb2 as ec
    from kipy.proto.common.types import base_types_pb2

    board.clear_selection()
    if not ids:
        return 0
    cmd = ec.AddToSelection()
    cmd.header.document.CopyFrom(board.document)
    cmd.items.extend(base_types_pb2.KIID(value=i) for i in ids)
    got = len(board.client.send(cmd, ec.SelectionResponse).items)
    board.clear_selection()
    return got


def drc_marker_ids(state_file: Path, board_file: Path) -> list[str]:
    """The ids of the last click's KiCad 10 markers, as the plugin recorded them."""
    state = json.loads(state_file.read_text(encoding="utf-8"))
    return list(state.get(str(board_file), []))
