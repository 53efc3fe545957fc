"""Knowledge chunks fold into their document by the last ``#`` of the id, as ChatCLI cuts them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.extract.contexts import _Folder, chunk_of


def test_any_suffix_after_the_last_hash_is_a_chunk() -> None:
    """``#0002``, ``#part-b`` and ``#7`` all name a chunk of the path before the last ``#``."""
    assert chunk_of("docs/intro.md#0002") == ("docs/intro.md", "0002")
    assert chunk_of("guide.md#part-b") == ("guide.md", "part-b")
    assert chunk_of("a#b/c.md#7") == ("a#b/c.md", "7")
    assert chunk_of("plain.md") is None
    assert chunk_of("#only") is None


@given(st.text(min_size=1).filter(lambda s: not s.startswith("#")), st.text())
def test_the_document_is_everything_before_the_last_hash(document: str, chunk: str) -> None:
    """Cut and joined again, a chunk id gives back what it was made of."""
    found = chunk_of(f"{document}#{chunk.replace('#', '')}")
    assert found == (document, chunk.replace("#", ""))


def test_chunks_join_numbers_in_order_then_others_as_they_came() -> None:
    """Numbered chunks in number order, named ones after, each once."""
    folder = _Folder(path=Path("contexts/k.json"))
    pieces = [
        ("g.md#b", "B"),
        ("g.md#0002", "two"),
        ("g.md#a", "A"),
        ("g.md#0001", "one"),
        ("g.md#b", "B again"),
    ]
    for at, (path, text) in enumerate(pieces):
        folder.add({"Path": path, "Content": text, "Type": "Markdown"}, f"[{at}]")
    (doc,) = folder.documents()
    assert doc.source == "g.md"
    assert doc.content.split("\n\n") == ["one", "two", "B", "A"]
