"""Link syntax and path rules: wikilinks, Markdown links, code, names, Obsidian paths; pure.

Contract: text in, link values out; nothing here knows the graph.  :mod:`.codespans` says
where text is code, :mod:`.wikilinks` and :mod:`.mdlinks` find links outside it,
:mod:`.names` is the one name normalizer, :mod:`.pathresolve` resolves a target over a set of
vault paths the way Obsidian does.  The graph (``graph.resolve``), the renderers, search and
the knowledge model all build on these, so a link means the same thing everywhere.
"""
