"""Three-way merge of one note: base + ours + theirs → merged bytes or a conflict; pure.

*Base* is what vaultsync last wrote at the path, *ours* the file as the user left it, *theirs*
the new render.  The merge keeps every byte of the user's text it can and takes the stores'
change wherever the user did not touch the same thing:

* **Front matter merges by key.**  Each top-level key is one block of lines (its line and the
  indented or ``- `` lines under it).  A key only one side changed takes that side's block; a
  key both changed alike is taken once.  A block list both sides changed (a user's extra tag,
  the stores' new one) keeps the user's items, in the user's order and spelling, gains the
  stores' new items and loses the items the stores dropped and the user left as they were.
  Anything else both changed is a conflict.  The user's key order is kept; a key the stores
  add goes after the key it follows in the render.  The values are compared as text, never
  re-emitted, so the user's formatting survives byte for byte.
* **The body merges by lines** with libgit2's ``merge_file`` (``LineMerge``, supplied by
  ``vault.vcs``: this module stays pure and git stays in the git module).
* A note that is not UTF-8, or where one side has no front matter, merges by lines as a whole.

A conflict is data (:class:`Merged` with ``clean=False`` and what overlapped); nothing here
decides what to write — ``vault.decide`` and ``vault.apply`` do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vaultsync.core.notes import load_yaml, split_front_matter

LineMerge = Callable[[bytes, bytes, bytes], tuple[bytes, bool]]
"""``(base, ours, theirs) → (merged, clean)``; not clean: ``merged`` holds conflict markers."""

_KEY_LINE = re.compile(r"(?P<key>[^\s#\-?:][^:\n]*?)[ \t]*:(?:[ \t]|\r?$)")
_ITEM_LINE = re.compile(r"[ ]*- ")


@dataclass(frozen=True, slots=True, kw_only=True)
class Merged:
    """The outcome of one merge."""

    data: bytes
    """The merged note (clean), else the note with git-style conflict markers."""
    clean: bool
    overlaps: tuple[str, ...] = ()
    """What both sides changed differently: ``front matter: tags``, ``body``."""


@dataclass(frozen=True, slots=True)
class _Note:
    head: str
    """The opening line, up to the YAML."""
    blocks: tuple[tuple[str, str], ...]
    """Top-level keys in order, each with its lines (comments before the first key: ``""``)."""
    closing: str
    """The closing line and its line break."""
    body: str


def merge_note(base: bytes, ours: bytes, theirs: bytes, *, merge_lines: LineMerge) -> Merged:
    """Merge the stores' change (base → theirs) into the user's file (ours)."""
    if theirs in (ours, base):
        return Merged(data=ours, clean=True)
    if base == ours:
        return Merged(data=theirs, clean=True)
    notes = [_parse(data) for data in (base, ours, theirs)]
    if any(note is None for note in notes):
        return _whole(base, ours, theirs, merge_lines)
    b, o, t = notes
    assert b is not None and o is not None and t is not None  # noqa: S101 - checked above
    blocks, overlaps = merge_blocks(b.blocks, o.blocks, t.blocks)
    body, body_clean = merge_lines(*(n.body.encode() for n in (b, o, t)))
    if not body_clean:
        overlaps = (*overlaps, "body")
    if overlaps:  # the version with markers shows the whole note, as git would
        return Merged(data=merge_lines(base, ours, theirs)[0], clean=False, overlaps=overlaps)
    text = o.head + "".join(lines for _key, lines in blocks) + o.closing
    return Merged(data=text.encode() + body, clean=True)


def _whole(base: bytes, ours: bytes, theirs: bytes, merge_lines: LineMerge) -> Merged:
    data, clean = merge_lines(base, ours, theirs)
    return Merged(data=data, clean=clean, overlaps=() if clean else ("note",))


def _parse(data: bytes) -> _Note | None:
    """The note split into front-matter key blocks and body; None: merge it as a whole."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    block = split_front_matter(text)
    if block is None:
        return None
    blocks = key_blocks(block.yaml)
    if blocks is None:
        return None
    end = block.yaml_start + len(block.yaml)
    return _Note(
        head=text[: block.yaml_start],
        blocks=blocks,
        closing=text[end : block.body_start],
        body=text[block.body_start :],
    )


def key_blocks(yaml: str) -> tuple[tuple[str, str], ...] | None:
    """The top-level keys of a YAML mapping with their lines; None when a key repeats."""
    blocks: list[tuple[str, list[str]]] = [("", [])]
    for line in yaml.splitlines(keepends=True):
        found = _KEY_LINE.match(line)
        if found is not None:
            blocks.append((found["key"], [line]))
        else:
            blocks[-1][1].append(line)
    keys = [key for key, _ in blocks]
    if len(set(keys)) != len(keys):
        return None
    return tuple((key, "".join(lines)) for key, lines in blocks if key or lines)


def merge_blocks(
    base: tuple[tuple[str, str], ...],
    ours: tuple[tuple[str, str], ...],
    theirs: tuple[tuple[str, str], ...],
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Key blocks merged (see the module docstring), and the keys both sides changed apart."""
    b, o, t = dict(base), dict(ours), dict(theirs)
    merged: dict[str, str | None] = {}
    overlaps: list[str] = []
    for key in [*o, *(k for k in t if k not in o)]:
        value = _merge_value(key, b.get(key), o.get(key), t.get(key))
        if value is _CONFLICT:
            overlaps.append(f"front matter: {key or 'comments'}")
            value = o.get(key)
        merged[key] = value if isinstance(value, str) or value is None else None
    order = _order([k for k, _ in ours], [k for k, _ in theirs])
    out = tuple((k, v) for k in order if (v := merged.get(k)) is not None)
    return out, tuple(overlaps)


_CONFLICT = object()


def _merge_value(key: str, base: str | None, ours: str | None, theirs: str | None) -> object:
    """One key's merged lines (None: the key is gone), or ``_CONFLICT``."""
    if theirs in (ours, base):
        return ours
    if ours == base:
        return theirs
    if None not in (base, ours, theirs):
        assert base is not None and ours is not None and theirs is not None  # noqa: S101
        listed = merge_list(key, base, ours, theirs)
        if listed is not None:
            return listed
    return _CONFLICT


def _items(key: str, lines: str) -> list[tuple[object, str]] | None:
    """A block list's items with their lines, or None when the block is anything else."""
    head, *rest = lines.splitlines(keepends=True)
    if head.strip() != f"{key}:" or not all(_ITEM_LINE.match(line) for line in rest):
        return None
    values, problem = load_yaml(lines)
    if problem is not None or not isinstance(values, dict):
        return None
    listed = values.get(key)
    if not isinstance(listed, list) or len(listed) != len(rest):
        return None
    return [(_hashable(value), line) for value, line in zip(listed, rest, strict=True)]


def _hashable(value: object) -> object:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def merge_list(key: str, base: str, ours: str, theirs: str) -> str | None:
    """A block list both sides changed, merged by items; None when one is not a block list."""
    found = [_items(key, lines) for lines in (base, ours, theirs)]
    if any(items is None for items in found):
        return None
    b_items, o_items, t_items = (dict(items or ()) for items in found)
    dropped = b_items.keys() - t_items.keys()
    kept = [(v, line) for v, line in (found[1] or ()) if v not in dropped]
    added = [(v, line) for v, line in (found[2] or ()) if v not in b_items and v not in o_items]
    head = ours.splitlines(keepends=True)[0]
    return head + "".join(line for _v, line in [*kept, *added])


def _order(ours: list[str], theirs: list[str]) -> list[str]:
    """The user's key order, each key only the render has placed after its predecessor there."""
    order = list(ours)
    for position, key in enumerate(theirs):
        if key in order:
            continue
        before = next((k for k in reversed(theirs[:position]) if k in order), None)
        order.insert(order.index(before) + 1 if before is not None else 0, key)
    return order
