"""Several rankings of notes → one: weighted reciprocal-rank fusion; pure.

Contract: ``fuse(rankings, weights, paths, first=…)`` scores each note ``Σ weight / (RRF_K + rank)``
over the rankings it appears in (rank from 1).  A note listed twice in one ranking counts
once, at its **best** rank (the first listing; goclaw's merge keeps whichever came first in
the concatenation, not the best).  The result is sorted by fused score, then by the best
rank it had anywhere, then by path and nid, so equal scores always come in the same order.
Notes in ``first`` (those whose title or alias *is* the query, as the text ranking puts them)
come before all others, in that same order.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

__all__ = ["RRF_K", "fuse"]

RRF_K = 60
"""The usual constant of reciprocal-rank fusion (Cormack et al., 2009)."""


def fuse(
    rankings: Sequence[Sequence[int]],
    weights: Sequence[float],
    paths: Mapping[int, str],
    *,
    limit: int,
    first: Collection[int] = (),
) -> tuple[tuple[int, float], ...]:
    """The ``limit`` best ``(nid, fused score)`` of ``rankings`` (see the module docstring)."""
    scores: dict[int, float] = {}
    best_rank: dict[int, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[int] = set()
        for rank, nid in enumerate(ranking, 1):
            if nid in seen:
                continue
            seen.add(nid)
            scores[nid] = scores.get(nid, 0.0) + weight / (RRF_K + rank)
            best_rank[nid] = min(best_rank.get(nid, rank), rank)
    order = sorted(
        scores,
        key=lambda nid: (nid not in first, -scores[nid], best_rank[nid], paths.get(nid, ""), nid),
    )
    return tuple((nid, scores[nid]) for nid in order[:limit])
