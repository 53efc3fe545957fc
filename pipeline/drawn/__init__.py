"""The links people draw by hand: ``<state>/memory/links.json`` ⇄ ``ExplicitLink`` records; edge.

Pure parts: :mod:`.rules` (relation slugs, notes, supersession), :mod:`.fileformat` (the
format and the merge of copies), :mod:`.export` (JSONL), :mod:`.ops` (the changes the link
commands make).  I/O: :mod:`.fileio` (read, lock, atomic write, quarantine) and
:mod:`.store` (``read_links`` for the graph build, ``LinkStore`` for the write commands).
The graph imports only the pure rules.
"""
