r"""Obsidian ``[[wikilinks]]``: find them, rewrite them, write them; pure, no I/O.

Contract:

* ``parse_wikilinks(text)`` returns every wikilink and embed outside code (see
  :mod:`vaultsync.links.codespans`), in text order, with the offsets of its source span.
* ``rewrite_wikilinks(text, replace)`` changes links and nothing else: code, and every byte
  between links, is copied as is.  ``rewrite_wikilinks(t, lambda l: None) == t``.
* ``format_wikilink(...)`` writes a link that ``parse_wikilinks`` reads back to the same fields,
  or raises ``ValueError`` when no wikilink can say it (a ``|`` or ``#`` in a file name, ``]]``
  in a label).

Syntax, as Obsidian reads it:

* ``[[target]]``, ``[[target|label]]``, ``[[target#A#B]]`` (heading chain ``A#B``),
  ``[[target#^block]]`` and ``[[target^block]]`` (block), ``[[#Heading]]`` (same note, empty
  target); ``![[…]]`` embeds, where the label is the display size (``100x145``).  The alias is
  split off first (at the first ``|``), then the fragment (at the first ``#``).
* Inside tables the pipe is escaped: ``[[Note\|Shown]]``; ``escaped_pipe`` records it so a
  rewrite can keep the table intact.  ``\|`` separates the alias anywhere.
* Target, fragment and label are trimmed (``[[  foo  ]]`` is ``foo``).
* A single ``]`` does not end a link (``[[Sq]uare]]`` targets ``Sq]uare``); ``[[`` cannot appear
  inside one (``[[a [[b]]`` is the link ``[[b]]``); a link never spans lines.
* ``[[1]](x.md)`` is a Markdown link whose text is ``[1]`` (CommonMark; MkDocs' release notes
  write footnote-style references so), not a wikilink followed by text.
* Not links: ``[[]]``, ``[[ ]]``, ``[[|x]]``, the editor's vault-search syntax ``[[##…]]`` and
  ``[[^^…]]``, a backslash-escaped ``\[[…]]`` (``\![[x]]`` is a plain link), and anything that
  touches inline code or a fenced block, except inline code inside the label:
  ``[[Functions#hasTag|`hasTag`]]`` is a link labelled `` `hasTag` ``, as Obsidian shows it.
* ``[[x^2]]`` is a block link only when the text after the last ``^`` is a valid block id
  (Latin letters, digits, ``-``); ``[[x^2 notes]]`` targets ``x^2 notes``.

Percent-encoding: the target is kept **as written**.  Decoding here would make a note literally
named ``100% sure`` unreachable and break the rewrite round trip; resolvers try the literal
target first and then its percent-decoded form (``My%20Note`` → ``My Note``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vaultsync.links.codespans import Span, code_mask, overlaps_code

__all__ = ["WikiLink", "format_wikilink", "parse_wikilinks", "rewrite_wikilinks"]

_WIKILINK = re.compile(
    r"(?P<bang>!?)\[\[(?!\[)"
    r"(?P<body>(?:[^\[\]\n]|\[(?!\[)|\](?!\]))+)"
    r"\]\]"
)
_BLOCK_ID = re.compile(r"[A-Za-z0-9-]+")
_MARKDOWN_DEST = re.compile(r"\([^\n]*\)")


@dataclass(frozen=True, slots=True, kw_only=True)
class WikiLink:
    """One ``[[wikilink]]`` or ``![[embed]]`` as written in a text."""

    target: str
    """The note part, trimmed; may contain ``/``; ``""`` for a same-note ``[[#Heading]]``."""
    heading: str | None = None
    """The heading chain after ``#`` (``A#B`` for ``[[t#A#B]]``)."""
    block: str | None = None
    """The block id of ``[[t#^b]]`` or ``[[t^b]]``, without ``^``."""
    label: str | None = None
    """The display text, or an embed's size (``100x145``)."""
    embed: bool = False
    start: int
    """Offset of ``!`` (embeds) or of the first ``[``."""
    end: int
    """Offset just after the closing ``]]``."""
    escaped_pipe: bool = False
    """The alias separator was written ``\\|`` (a link inside a table)."""


def _escaped(text: str, offset: int) -> bool:
    """Whether the character at ``offset`` is preceded by an odd number of backslashes."""
    count = 0
    while offset - count > 0 and text[offset - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _parse_body(body: str) -> tuple[str, str | None, str | None, str | None, bool] | None:
    """Split a link body into target, heading, block, label and escaped-pipe; None if no link."""
    if body.startswith(("##", "^^")):
        return None
    path, pipe, label_text = body.partition("|")
    escaped_pipe = bool(pipe) and path.endswith("\\")
    if escaped_pipe:
        path = path[:-1]
    label = (label_text.strip() or None) if pipe else None
    target, hash_sign, fragment = path.partition("#")
    heading = block = None
    if hash_sign:
        fragment = fragment.strip()
        if fragment.startswith("^"):
            block = fragment[1:].strip() or None
        else:
            heading = fragment or None
    else:
        head, caret, tail = target.rpartition("^")
        if caret and _BLOCK_ID.fullmatch(tail.strip()):
            target, block = head, tail.strip()
    target = target.strip()
    if not (target or heading or block):
        return None
    return target, heading, block, label, escaped_pipe


def _touches_code(mask: tuple[Span, ...], match: re.Match[str], start: int) -> bool:
    """Whether code overlaps the link anywhere but inside its label.

    Obsidian renders ``[[Functions#hasTag|`hasTag`]]`` as a link whose label is code, while a
    link written inside code, or one whose target or brackets are code, is no link.  A code
    span that starts in the label and runs past the ``]]`` overlaps the closing brackets.
    """
    pipe = match["body"].find("|")
    label_start = match.end("body") if pipe == -1 else match.start("body") + pipe + 1
    return overlaps_code(mask, start, label_start) or overlaps_code(
        mask, match.end("body"), match.end()
    )


def parse_wikilinks(text: str, *, mask: tuple[Span, ...] | None = None) -> tuple[WikiLink, ...]:
    """Every wikilink and embed of ``text`` that is not in code, in order.

    Args:
        text: Markdown source.
        mask: ``code_mask(text)`` when the caller already has it.

    Returns:
        The links, each with its half-open source span ``[start, end)``.
    """
    if "[[" not in text:
        return ()
    if mask is None:
        mask = code_mask(text)
    links: list[WikiLink] = []
    for match in _WIKILINK.finditer(text):
        bracket = match.start() + len(match["bang"])
        if _escaped(text, bracket):
            continue
        embed = bool(match["bang"]) and not _escaped(text, match.start())
        start = match.start() if embed else bracket
        end = match.end()
        if _touches_code(mask, match, start) or _MARKDOWN_DEST.match(text, end):
            continue
        parts = _parse_body(match["body"])
        if parts is None:
            continue
        target, heading, block, label, escaped_pipe = parts
        links.append(
            WikiLink(
                target=target,
                heading=heading,
                block=block,
                label=label,
                embed=embed,
                start=start,
                end=end,
                escaped_pipe=escaped_pipe,
            )
        )
    return tuple(links)


def rewrite_wikilinks(text: str, replace: Callable[[WikiLink], str | None]) -> str:
    """``text`` with each link outside code replaced by ``replace(link)``.

    Args:
        text: Markdown source.
        replace: returns the new source of a link, or None to keep it as written.

    Returns:
        The rewritten text; everything but the replaced link spans is unchanged.
    """
    links = parse_wikilinks(text)
    if not links:
        return text
    pieces: list[str] = []
    cursor = 0
    for link in links:
        new = replace(link)
        if new is None:
            continue
        pieces.append(text[cursor : link.start])
        pieces.append(new)
        cursor = link.end
    pieces.append(text[cursor:])
    return "".join(pieces)


# Characters that never change how a link reads back: no brackets, alias bar, fragment marks,
# backticks (code spans), backslashes (escapes) or line breaks.
_PLAIN_PART = re.compile(r"[^\[\]|#^`\\\r\n]+")


def reads_back_plainly(path: str, label: str | None) -> bool:
    """Whether ``[[path|label]]`` surely reads back as exactly this path and label.

    The common case (a vault path and a title) needs no parse to be checked.
    """
    return (
        _PLAIN_PART.fullmatch(path) is not None
        and path == path.strip()
        and (label is None or (_PLAIN_PART.fullmatch(label) is not None and label == label.strip()))
    )


def format_wikilink(
    path_without_md: str,
    *,
    heading: str | None = None,
    block: str | None = None,
    label: str | None = None,
    embed: bool = False,
    escaped_pipe: bool = False,
) -> str:
    r"""Write ``[[Folder/Note#heading|label]]`` (or ``[[Folder/Note#^block]]``, ``![[…]]``).

    Args:
        path_without_md: the vault path (``.md`` dropped for notes) or a name; ``""`` links to
            a heading or block of the same note.
        heading: a heading, or a chain ``A#B``.
        block: a block id, written ``#^block``; not together with ``heading``.
        label: display text (or an embed's size).
        embed: write ``![[…]]``.
        escaped_pipe: write the alias separator as ``\|``, for a link inside a table.

    Returns:
        The link source.

    Raises:
        ValueError: the parts cannot be written so that the link reads back the same.
    """
    _refuse_conflicts(heading=heading, block=block, label=label, escaped_pipe=escaped_pipe)
    fragment = f"#{heading}" if heading is not None else f"#^{block}" if block is not None else ""
    alias = "" if label is None else ("\\|" if escaped_pipe else "|") + label
    source = f"{'!' if embed else ''}[[{path_without_md}{fragment}{alias}]]"
    if not fragment and not escaped_pipe and reads_back_plainly(path_without_md, label):
        return source
    intended = (0, len(source), path_without_md, heading, block, label, embed)
    if _read_back(source) != intended:
        msg = f"{source!r} does not read back as the intended wikilink"
        raise ValueError(msg)
    return source


def _refuse_conflicts(
    *, heading: str | None, block: str | None, label: str | None, escaped_pipe: bool
) -> None:
    """Raise ``ValueError`` for parts no wikilink can hold together."""
    if heading is not None and block is not None:
        msg = "a wikilink names a heading or a block, not both"
        raise ValueError(msg)
    if escaped_pipe and label is not None and "|" in label:
        msg = f"label {label!r} would split the table cell"
        raise ValueError(msg)


def _read_back(source: str) -> tuple[object, ...] | None:
    """The span and parts of the first wikilink ``source`` parses to; ``None`` when none."""
    links = parse_wikilinks(source)
    if not links:
        return None
    first = links[0]
    return (
        first.start,
        first.end,
        first.target,
        first.heading,
        first.block,
        first.label,
        first.embed,
    )
