"""The bytes of an IPC-2581 document, bounded before expat sees them: a regular file of at most
:data:`~accel_drc.hostile.MAX_XML_BYTES`, the one XML member of a zip streamed (never unpacked
whole, refused past :func:`~accel_drc.hostile.unzip_limit`), and every chunk checked for DTDs
and entities (across chunk boundaries too), UTF-16 and too many tags."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..errors import InputError
from ..hostile import (
    MAX_XML_BYTES,
    MAX_XML_TAGS,
    MAX_ZIP_RATIO,
    open_regular,
    over_limit,
    unzip_limit,
)

CHUNK = 1 << 20
#: prolog constructs that open the door to entity expansion or external reads
FORBIDDEN = (b"<!DOCTYPE", b"<!ENTITY", b"<!ELEMENT", b"<!ATTLIST")


def zip_chunks(fh: Any, path: str) -> Iterator[bytes]:
    """The one XML document inside a zip, streamed (never unpacked whole)."""
    import zipfile

    try:
        zf = zipfile.ZipFile(fh)
        members = [i for i in zf.infolist() if not i.is_dir()]
        xml = [i for i in members if i.filename.lower().endswith((".xml", ".cvg"))]
        if len(xml) != 1 and len(members) != 1:
            raise InputError(path, f"zip holds {len(members)} files, none or several of them XML")
        info = xml[0] if len(xml) == 1 else members[0]
        if info.flag_bits & 0x1:
            raise InputError(path, f"{info.filename} is encrypted in the zip: not supported")
        limit = unzip_limit(info.compress_size)
        if info.file_size > limit:
            raise unzip_refused(path, info.filename, info.file_size, info.compress_size)
        inner = zf.open(info)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        RuntimeError,  # "is encrypted, password required"
        OSError,
        zlib.error,
    ) as exc:
        raise InputError(path, f"unreadable zip: {exc}") from None

    def raw() -> Iterator[bytes]:
        total = 0
        with inner:
            while True:
                try:
                    chunk = inner.read(CHUNK)
                except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError) as exc:
                    raise InputError(path, f"unreadable zip: {exc}") from None
                if not chunk:
                    return
                total += len(chunk)
                if total > limit:  # the header lied about the size
                    raise unzip_refused(path, info.filename, total, info.compress_size)
                yield chunk

    return check_chunks(raw(), path)


def unzip_refused(path: str, name: str, size: int, compressed: int) -> InputError:
    """A zip member that unpacks to more than :func:`~accel_drc.hostile.unzip_limit` allows."""
    if size > MAX_XML_BYTES:
        return over_limit(path, size, MAX_XML_BYTES)
    return InputError(
        path,
        f"{name} unpacks to {size:,} bytes from {compressed:,}, over the limit of "
        f"{MAX_ZIP_RATIO} times its compressed size (real exports: 10-18 times): a zip bomb?",
    )


# ---------------------------------------------------------------------------------------------
# Input safety
# ---------------------------------------------------------------------------------------------


class open_bounded:
    """:func:`~accel_drc.hostile.open_regular` as a context manager (errors: :class:`InputError`)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> Any:
        # a regular file of at most MAX_XML_BYTES (zipped or not): never a device or a FIFO
        self.fh = open_regular(self.path, MAX_XML_BYTES)
        return self.fh

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def file_chunks(fh: Any, path: str) -> Iterator[bytes]:
    def raw() -> Iterator[bytes]:
        while True:
            try:
                chunk = fh.read(CHUNK)
            except OSError as exc:
                raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
            if not chunk:
                return
            yield chunk

    return check_chunks(raw(), path)


def check_chunks(chunks: Iterable[bytes], path: str) -> Iterator[bytes]:
    """Pass chunks through, refusing DTDs/entities (also across a chunk boundary), UTF-16, more
    than :data:`~accel_drc.hostile.MAX_XML_BYTES` and more than
    :data:`~accel_drc.hostile.MAX_XML_TAGS` ``<`` (one vectorised count per chunk; a Python counter per element costs more)."""
    tail = b""
    lines = 0  # newlines before ``probe``
    first = True
    total = tags = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_XML_BYTES:
            raise over_limit(path, total, MAX_XML_BYTES)
        tags += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == 0x3C))  # b"<"
        if tags > MAX_XML_TAGS:
            raise InputError(
                path,
                f"more than {MAX_XML_TAGS:,} tags, over the limit (vme-wren's export has "
                "1.65 million): not a board export",
                offset=total,
            )
        if first:
            first = False
            if chunk[:2] in (b"\xff\xfe", b"\xfe\xff") or chunk[:4] in (
                b"\x00<\x00?",
                b"<\x00?\x00",
            ):
                raise InputError(path, "UTF-16 IPC-2581 files are not supported; export as UTF-8")
        probe = tail + chunk
        for bad in FORBIDDEN:
            at = probe.find(bad)
            if at >= 0:
                raise InputError(
                    path,
                    f"refusing XML with a {bad[2:].decode()} declaration (DTDs and entities "
                    "are not part of IPC-2581 and can expand without bound or read other files)",
                    line=lines + probe.count(b"\n", 0, at) + 1,
                )
        keep = max(len(probe) - 16, 0)  # the next probe starts this far into this one
        lines += probe.count(b"\n", 0, keep)
        tail = probe[keep:]
        yield chunk
