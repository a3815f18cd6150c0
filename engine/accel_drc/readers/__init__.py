"""Board readers: one module per input format, each ``read(path) -> Board``.

:func:`read_board` picks the reader from the file's content (not its extension alone), so a
renamed file is still read or refused with a clear message.
"""

from __future__ import annotations

from ..errors import InputError
from ..hostile import open_regular
from ..model import Board


def sniff(head: bytes) -> str | None:
    """Name of the format of a file that starts with ``head`` (first few KiB), or None."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"(kicad_pcb"):
        return "kicad_pcb"
    if text.startswith(b"<") and b"IPC-2581" in head:
        return "ipc2581"
    return None


def read_board(path: str) -> Board:
    """Read any supported board file."""
    # a regular file only (a board linked to /dev/stdin hung); each reader bounds the size
    with open_regular(path, None) as fh:
        try:
            head = fh.read(8192)
        except OSError as exc:
            raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    kind = sniff(head)
    if kind == "kicad_pcb":
        from . import kicad_file

        return kicad_file.read(path)
    if kind == "ipc2581":
        from . import ipc2581

        return ipc2581.read(path)
    if not head.strip():
        raise InputError(path, "file is empty")
    if head.startswith(b"PK\x03\x04") or head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        # a zip (`kicad-cli pcb export ipc2581 --compress`) or other XML: the IPC-2581 reader
        # unpacks the one document, and names the root element it found (or refuses the DTD)
        from . import ipc2581

        return ipc2581.read(path)
    raise InputError(
        path,
        f"not a KiCad board (.kicad_pcb) or IPC-2581 XML file (it starts with {head[:16]!r})",
    )
