"""Citable sources: the publications in ``rules/references.yaml`` and the citations that name them.

A rule's ``source`` (and the ``source`` of a signal type, a laminate, a foil grade, a capacitor
model, a classifier vote) is one string that cites publications by id in square brackets, each
followed by the exact place in it::

    "[nextpcb2026] PCB Design Parameter table, training column; [ipc4101] slash sheets /126, /129"

Why a string and not a list of mappings: a source travels unchanged through findings, SARIF,
JUnit and the project overrides (``accel-drc.yaml:12 (overrides [nextpcb2026] …)``), and one
regular expression finds every id in it, wherever it ended up.  ``[U]`` is not an id: it marks
a number no public primary source confirmed.  Every other bracketed word must be a known id
(:func:`check_source`); the loader reports an unknown one as ``file:line`` (exit 3), so a typo
cannot leave a limit pointing at nothing.  Reports expand the ids into full citations
(:meth:`References.cite`): author, title, publisher, year, URL or document number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .yamlsafe import load_schema

#: a citation: ``[id]``; ids are lower-case words joined by ``-``, ``_`` or ``.``
CITE = re.compile(r"\[([^\[\]\s]+)\]")
ID_PATTERN = r"^[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*$"
_ID = re.compile(ID_PATTERN)
#: the one bracketed word that is not a reference: "no public primary source confirmed this"
UNCONFIRMED = "U"


#: the JSON schema of ``references.yaml`` (``rules/schemas/references.schema.json``)
REFERENCES_SCHEMA: dict[str, Any] = load_schema("references")


@dataclass(frozen=True)
class Reference:
    """One publication: who wrote it, what it is called, who published it, when, and where to
    find it (a URL, a document number, or both).  ``unconfirmed`` names the fields not checked
    against the document itself; :meth:`citation` marks them ``[U]``."""

    id: str
    author: str
    title: str
    publisher: str
    year: int
    url: str = ""
    document: str = ""
    note: str = ""
    unconfirmed: tuple[str, ...] = ()

    def _f(self, name: str, text: str) -> str:
        return f"{text} [U]" if name in self.unconfirmed else text

    def citation(self) -> str:
        """``Author. "Title". Publisher, year. Document. URL`` — the full citation shown to users."""
        parts = [
            self._f("author", self.author) + ".",
            "\u201c" + _ends(self._f("title", self.title)) + "\u201d",
            f"{self._f('publisher', self.publisher)}, {self._f('year', str(self.year))}.",
        ]
        if self.document:
            parts.append(self._f("document", self.document) + ".")
        if self.url:
            parts.append(self._f("url", self.url))
        return " ".join(parts)

    def short(self) -> str:
        """``Author, "Title", Publisher, year`` (no URL: for tooltips and one-line mentions)."""
        return f"{self.author}, \u201c{self.title}\u201d, {self.publisher}, {self.year}"

    def to_dict(self) -> dict[str, Any]:
        """The reference as JSON: every field plus the formatted ``citation``."""
        out: dict[str, Any] = {
            "id": self.id,
            "author": self.author,
            "title": self.title,
            "publisher": self.publisher,
            "year": self.year,
        }
        if self.document:
            out["document"] = self.document
        if self.url:
            out["url"] = self.url
        if self.unconfirmed:
            out["unconfirmed"] = list(self.unconfirmed)
        out["citation"] = self.citation()
        return out


def _ends(text: str) -> str:
    """``text`` ending in one full stop (a title may end in its own ``?``)."""
    return text if text.endswith((".", "?", "!")) else text + "."


def cited_ids(source: str | None) -> list[str]:
    """The reference ids ``source`` cites, in order, each once (``[U]`` and bracketed words
    that cannot be ids, like ``[GHz]``, are not ids)."""
    out: list[str] = []
    for m in CITE.finditer(source or ""):
        word = m.group(1)
        if word != UNCONFIRMED and _ID.match(word) and word not in out:
            out.append(word)
    return out


def resolve(refs: Mapping[str, Reference], source: str | None) -> list[Reference]:
    """The references of ``refs`` that ``source`` cites, in citation order (ids ``refs`` does
    not hold are skipped: a project's own override text may bracket words of its own)."""
    return [refs[i] for i in cited_ids(source) if i in refs]


def bibliography(
    refs: Mapping[str, Reference], sources: Iterable[str | None]
) -> dict[str, dict[str, Any]]:
    """``{id: reference as JSON}`` for every reference cited in ``sources``, in first-cited
    order: the bibliography of a report (empty when ``refs`` is)."""
    out: dict[str, dict[str, Any]] = {}
    if not refs:
        return out
    seen: set[str] = set()
    for s in sources:
        if not s or s in seen:
            continue
        seen.add(s)
        for r in resolve(refs, s):
            if r.id not in out:
                out[r.id] = r.to_dict()
    return out


class References(Mapping[str, Reference]):
    """The reference library, by id."""

    def __init__(self, refs: Iterable[Reference] = (), version: str = "") -> None:
        self._refs = {r.id: r for r in refs}
        self.version = version

    def __getitem__(self, key: str) -> Reference:
        return self._refs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._refs)

    def __len__(self) -> int:
        return len(self._refs)

    def resolve(self, source: str | None) -> list[Reference]:
        """The known references ``source`` cites (see :func:`resolve`)."""
        return resolve(self, source)

    def cite(self, source: str | None) -> list[str]:
        """``["[id] full citation", …]`` for every known reference ``source`` cites."""
        return [f"[{r.id}] {r.citation()}" for r in self.resolve(source)]


def references_from_data(data: Mapping[str, Any]) -> References:
    """Build the library from validated ``references.yaml`` data."""
    refs = []
    for rid, r in data["references"].items():
        refs.append(
            Reference(
                id=rid,
                author=" ".join(str(r["author"]).split()),
                title=" ".join(str(r["title"]).split()),
                publisher=" ".join(str(r["publisher"]).split()),
                year=int(r["year"]),
                url=str(r.get("url", "")),
                document=str(r.get("document", "")),
                note=" ".join(str(r.get("note", "")).split()),
                unconfirmed=tuple(r.get("unconfirmed", ())),
            )
        )
    return References(refs, str(data.get("version", "")))


def check_source(source: str, refs: Mapping[str, Any]) -> str | None:
    """Why ``source`` is not a valid citation, or None when it is.

    Valid: it cites at least one reference by ``[id]`` or says ``[U]`` (no public primary
    source), and every bracketed word in it is ``U`` or an id that ``refs`` defines."""
    words = [m.group(1) for m in CITE.finditer(source)]
    unknown = [w for w in words if w != UNCONFIRMED and w not in refs]
    if unknown:
        shown = ", ".join(f"[{w}]" for w in dict.fromkeys(unknown))
        return (
            f"source cites {shown}, not in references.yaml (a source names publications as "
            "[id] from rules/references.yaml, or [U] when no public primary source exists)"
        )
    if not words:
        return (
            f"source {source!r} cites no publication: name one as [id] from "
            "rules/references.yaml followed by the place in it, or mark the number [U]"
        )
    return None
