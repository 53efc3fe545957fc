"""The bottom layer every stage may import: stage types, errors, settings, shared I/O.

* :mod:`.model` — every frozen type that crosses a stage boundary (records, graph, ``NoteSpec``);
* :mod:`.errors` — the one exception tree, each class with its exit code;
* :mod:`.settings` — caps and where the state directory and vault live (reads the environment);
* :mod:`.fsio` — atomic writes, directory fsync, file locks, the racy-timestamp rule (I/O);
* :mod:`.digest` — digests of parts, files and vaultsync's own code;
* :mod:`.redact` and :mod:`.privacy` — secret masking and the private-key rule;
* :mod:`.parallel` — work shared with one forked helper process;
* :mod:`.text` — small text helpers.

Nothing here imports a stage.
"""
