"""Links ⇄ JSONL, the form ``/memory export`` and ``import`` carry them in; pure.

The first line is the header ``{"kind":"header","version":1}``; every other line is one link,
``{"from","to","rel","note","created_at","updated_at"}`` (``updated_at``, the time the note last
changed, may be absent on import).  Fact ids are content hashes, so the links of an export
land on the same facts on another machine.  Blank lines are skipped; ``"kind":"link"`` on a
link line is accepted.
"""

from __future__ import annotations

import json
from pathlib import Path

from vaultsync.core.errors import LinkStoreError, StoreError
from vaultsync.drawn.fileformat import (
    FORMAT_VERSION,
    LinkFile,
    LinkKey,
    RecordError,
    StoredLink,
    UnsupportedVersionError,
    combine,
    link_record,
    record_link,
)
from vaultsync.extract.jsonio import describe, parse_json

EXPORT_HEADER = {"kind": "header", "version": FORMAT_VERSION}


def export_lines(doc: LinkFile) -> str:
    """The header line, then one line per link in key order; every line ends with a newline."""
    lines = [EXPORT_HEADER, *(link_record(link) for link in doc.links)]
    return "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    )


def parse_lines(text: str, source: str = "<import>") -> tuple[StoredLink, ...]:
    """An export → its links (copies of one key combined), or one ``LinkStoreError``.

    Blank lines are skipped.  The first line must be the header; every other line one link.
    All lines are checked before anything is returned, and the error names the first bad line
    and counts the others.
    """
    problems: list[tuple[int, str]] = []
    links: dict[LinkKey, StoredLink] = {}
    header = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        try:
            link = _line(line, header)
        except RecordError as bad:
            problems.append((number, f"{bad.where}: {bad.what}" if bad.where else bad.what))
        except UnsupportedVersionError as err:
            raise LinkStoreError(f"{source}:{number}: {err.what}", hint=err.hint) from None
        else:
            if link is not None:
                held = links.get(link.key)
                links[link.key] = link if held is None else combine(held, link)
        header = True
    if not header:
        problems.append((1, 'no header line {"kind":"header","version":1}: nothing to import'))
    if problems:
        number, what = problems[0]
        more = ""
        if len(problems) > 1:
            shown = ", ".join(str(n) for n, _ in problems[1:6])
            etc = ", …" if len(problems) > 6 else ""
            more = f" (and {len(problems) - 1} more bad lines: {shown}{etc})"
        raise LinkStoreError(
            f"{source}:{number}: {what}{more}", hint="nothing was imported; fix the lines and retry"
        )
    return tuple(links[key] for key in sorted(links))


def _line(line: str, header_seen: bool) -> StoredLink | None:
    if line.startswith("enc:"):
        raise RecordError(
            "", "the line is sealed (ChatCLI at-rest encryption) and cannot be read here"
        )
    try:
        value: object = parse_json(line.encode("utf-8", "surrogatepass"), Path("line"))
    except StoreError as err:  # the one strict reader; a line's place is its column
        where = f"column {err.where.partition(':')[2]}" if ":" in err.where else err.where
        raise RecordError(where, err.what) from None
    kind = value.get("kind") if isinstance(value, dict) else None
    if not header_seen:
        if not isinstance(value, dict) or kind != "header":
            raise RecordError("", 'expected the header {"kind":"header","version":1} first')
        version = value.get("version")
        if type(version) is not int or version < FORMAT_VERSION:
            raise RecordError("version", f"expected {FORMAT_VERSION}, got {describe(version)}")
        if version > FORMAT_VERSION:
            raise UnsupportedVersionError(
                path="",
                what=f"export version {version} is newer than this vaultsync reads",
                hint="upgrade vaultsync",
            )
        return None
    if kind not in (None, "link"):
        raise RecordError("kind", f"expected a link record, got kind {describe(kind)}")
    return record_link(value, "")
