"""Connecting to a running KiCad: socket, token, timeouts, retries and messages a user can act on.

KiCad's API server answers ``AS_BUSY`` while the editor is in an interactive tool or a long
operation and ``AS_NOT_READY`` while a board is still loading; both go away on their own, so the
plugin waits and retries instead of failing.  Everything else (server off, no board open) needs
the user to do something, and the message says what.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: big boards (vme-wren: 69 MB) take seconds per call; KiCad's default 2 s times out on them
DEFAULT_TIMEOUT_MS = 30_000
#: how long to keep retrying a call KiCad says it cannot answer *yet*
RETRY_FOR_S = 30.0

HOW_TO_ENABLE = (
    "Turn on KiCad's API server: in KiCad, Preferences > Preferences > Plugins, tick "
    "'Enable KiCad API', then restart the PCB editor."
)


class LiveError(Exception):
    """A problem with the live KiCad the user can fix; ``str()`` is the whole message."""


def _status_names() -> tuple[int, ...]:
    from kipy.proto.common import ApiStatusCode

    return (ApiStatusCode.AS_BUSY, ApiStatusCode.AS_NOT_READY)


def is_transient(exc: BaseException) -> bool:
    """True for ApiErrors KiCad clears by itself (busy, not ready)."""
    from kipy.errors import ApiError

    return isinstance(exc, ApiError) and exc.code in _status_names()


def is_no_handler(exc: BaseException) -> bool:
    """True when the server does not know the command (an older KiCad than the call needs)."""
    from kipy.errors import ApiError
    from kipy.proto.common import ApiStatusCode

    if not isinstance(exc, ApiError):
        return False
    if exc.code in (ApiStatusCode.AS_UNHANDLED, ApiStatusCode.AS_UNIMPLEMENTED):
        return True
    return "no handler" in str(exc).lower()


def retry(fn: Callable[..., T], *args: Any, retry_for_s: float = RETRY_FOR_S) -> T:
    """Call ``fn(*args)``, retrying while KiCad answers busy / not ready."""
    deadline = time.monotonic() + retry_for_s
    delay = 0.2
    while True:
        try:
            return fn(*args)
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() > deadline:
                raise
            log.info("KiCad busy (%s); retrying in %.1f s", exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def socket_path() -> str:
    """The socket the plugin talks to: ``KICAD_API_SOCKET`` (set by KiCad for plugins), else
    kipy's platform default (``ipc:///tmp/kicad/api.sock`` on Linux/macOS)."""
    from kipy.kicad import _default_socket_path

    return _default_socket_path()


def connect(timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
    """A kipy ``KiCad`` connected and answering, or :class:`LiveError` saying what to do."""
    try:
        from kipy import KiCad
        from kipy.errors import ApiError
        from kipy.errors import ConnectionError as KiConnectionError
    except ImportError as exc:  # the plugin venv lacks kicad-python
        raise LiveError(
            f"kicad-python is not installed ({exc}); run: pip install 'kicad-python>=0.8'"
        ) from None
    path = socket_path()
    token = os.environ.get("KICAD_API_TOKEN")
    try:
        kicad = KiCad(socket_path=path, kicad_token=token, timeout_ms=timeout_ms)
        retry(kicad.ping)
    except KiConnectionError as exc:
        raise LiveError(
            f"cannot reach KiCad's API server at {path} ({exc}). Is KiCad running with the "
            f"PCB editor open? {HOW_TO_ENABLE}"
        ) from None
    except ApiError as exc:
        raise LiveError(f"KiCad's API server at {path} refused the connection: {exc}") from None
    return kicad


def open_board(kicad: Any) -> Any:
    """The board open in the PCB editor, or :class:`LiveError` when there is none."""
    from kipy.errors import ApiError

    try:
        return retry(kicad.get_board)
    except ApiError as exc:
        raise LiveError(
            f"no board is open in KiCad's PCB editor ({exc}); open the board, then run again"
        ) from None


def board_path(board: Any) -> str:
    """Absolute path of the open board's file (``""`` for a board never saved)."""
    doc = board.document
    directory = doc.project.path
    name = doc.board_filename
    if not name:
        return ""
    return os.path.join(directory, name) if directory else name
