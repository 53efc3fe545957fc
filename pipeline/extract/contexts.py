"""State dir → ``/context`` contexts with their documents, chunks folded back; reads files.

Each ``contexts/<id>.json`` (store formats §13) becomes one ``Context``.  Its documents are
keyed by ``Path``: the entries of ``files[]`` come first, then those of ``chunks[].files[]`` in
chunk order (``index``, then position), and every piece of content seen for one path is
concatenated in that order, an identical piece only once.  A docs-flatten chunk
(``docs/intro.md#0001``, ``#0002`` …) is folded back into its document, ``docs/intro.md``, in
chunk order, each chunk starting a new paragraph: the document gets one note, its title and
its links (a chunk id names the document: ``graph.query``).  Paths are data: they are kept as
written (backslashes included) and never opened.

Rules the store leaves open, decided here: a context without ``id`` takes its file name, one
without ``name`` its id; a document without ``Type`` is ``Text`` (ChatCLI's default); when two
files of one folder hold the same id, the one updated last wins.  Only ``<state>/contexts``
is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.core.model import Context, Document
from vaultsync.extract.jsonio import (
    JSONObject,
    as_object,
    fail,
    get_id,
    get_int,
    get_str,
    get_str_map,
    get_strs,
    get_time,
    join,
    load_json,
    objects,
    time_key,
    unique_sorted,
)
from vaultsync.extract.skips import Reading
from vaultsync.extract.sources import context_folders, is_context

DEFAULT_TYPE = "Text"


def _read_context(path: Path) -> Context | None:
    raw = load_json(path)
    return None if raw is None else _context(as_object(raw, path, ""), path)


def read_contexts(state_dir: Path, reading: Reading | None = None) -> tuple[Context, ...]:
    """Contexts sorted by (created_at, id), each with its documents sorted by source.

    A context file that cannot be read (ChatCLI moves it aside and goes on) is
    skipped through ``reading``, which answers its last good record.
    """
    reading = reading or Reading(state_dir)
    contexts: list[Context] = []
    for folder in context_folders(state_dir):
        known = {context.id for context in contexts}
        contexts += [c for c in _folder_contexts(folder, reading) if c.id not in known]
    return unique_sorted(
        contexts,
        key=lambda c: c.id,
        sort_key=lambda c: (time_key(c.created_at), c.id),
        rank=lambda c: time_key(c.updated_at),
    )


def _folder_contexts(folder: Path, reading: Reading) -> list[Context]:
    """The contexts of one folder (its last good ones when it cannot be listed)."""
    entries = reading.entries(folder)
    if entries is None:
        return list(reading.kept_under(folder))
    found = (reading.item(Path(e.path), _read_context) for e in entries if is_context(e))
    return [context for context in found if context is not None]


def _context(obj: JSONObject, path: Path) -> Context:
    ident = get_id(obj, path, "") or path.name[: -len(".json")]
    folder = _Folder(path)
    for at, item in objects(obj.get("files"), path, "files"):
        folder.add(item, at)
    chunks = [
        (get_int(chunk, "index", path, at), position, at, chunk)
        for position, (at, chunk) in enumerate(objects(obj.get("chunks"), path, "chunks"))
    ]
    for _, _, chunk_at, chunk in sorted(chunks, key=lambda c: (c[0], c[1])):
        for at, item in objects(chunk.get("files"), path, join(chunk_at, "files")):
            folder.add(item, at)
    return Context(
        id=ident,
        name=get_str(obj, "name", path, "") or ident,
        mode=get_str(obj, "mode", path, ""),
        description=get_str(obj, "description", path, ""),
        tags=get_strs(obj, "tags", path, ""),
        metadata=get_str_map(obj, "metadata", path, ""),
        created_at=get_time(obj, "created_at", path, ""),
        updated_at=get_time(obj, "updated_at", path, ""),
        documents=folder.documents(),
    )


def chunk_of(path: str) -> tuple[str, str] | None:
    """A knowledge chunk's document and its chunk id, cut at the last ``#`` as ChatCLI does.

    ``docs/intro.md#0002`` is chunk ``0002`` of ``docs/intro.md``, and ``guide.md#part-b``
    chunk ``part-b`` of ``guide.md``, whatever follows the ``#`` (store formats §19).
    """
    document, sep, chunk = path.rpartition("#")
    return (document, chunk) if sep and document else None


def _chunk_order(chunk: str, seen: int) -> tuple[int, int, str]:
    """Numbered chunks in number order, then the others in the order they came."""
    return (0, int(chunk), "") if chunk.isdigit() else (1, seen, chunk)


@dataclass(slots=True)
class _Pieces:
    """The content pieces seen for one path, in order, and its first non-empty type."""

    texts: list[str] = field(default_factory=list)
    type: str = ""
    chunks: dict[str, str] = field(default_factory=dict)
    """Knowledge chunks by id, as they came; folded back after ``texts`` (:func:`_chunk_order`)."""

    def text(self) -> str:
        """The pieces, then the chunks in order, each chunk starting a new paragraph."""
        text = "".join(self.texts)
        arrived = enumerate(self.chunks.items())
        for _, (_, chunk) in sorted(arrived, key=lambda item: _chunk_order(item[1][0], item[0])):
            if text and not text.endswith("\n\n"):
                text += "\n" if text.endswith("\n") else "\n\n"
            text += chunk
        return text


@dataclass(slots=True)
class _Folder:
    """Documents of one context under construction, keyed by path."""

    path: Path
    by_source: dict[str, _Pieces] = field(default_factory=dict)

    def add(self, item: JSONObject, at: str) -> None:
        """Fold one ``{Path, Content, Type}`` entry into the document of its path."""
        source = get_str(item, "Path", self.path, at)
        if not source:
            fail(self.path, join(at, "Path"), "missing")
        content = get_str(item, "Content", self.path, at)
        kind = get_str(item, "Type", self.path, at)
        chunk = chunk_of(source)
        if chunk is not None:
            source = chunk[0]
        pieces = self.by_source.setdefault(source, _Pieces())
        if chunk is not None:
            pieces.chunks.setdefault(chunk[1], content)
        elif content and content not in pieces.texts:
            pieces.texts.append(content)
        if not pieces.type:
            pieces.type = kind

    def documents(self) -> tuple[Document, ...]:
        """The folded documents, sorted by source."""
        return tuple(
            Document(source=source, content=p.text(), type=p.type or DEFAULT_TYPE)
            for source, p in sorted(self.by_source.items())
        )
