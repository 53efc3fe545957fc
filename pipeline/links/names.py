"""The one name normalizer of the project, and the relation slug; pure, no I/O.

Contract:

* ``normalize_name(text)`` is the key every name comparison uses (titles, aliases, wikilink
  targets against titles).  Two names are "the same" exactly when their keys are equal.
  It is idempotent: ``normalize_name(normalize_name(x)) == normalize_name(x)``.
* ``slugify_relation(text)`` turns a free relation name into the snake-case slug stored in
  ``links.json`` (``Depends On`` → ``depends_on``).

Accents are removed only where they *are* accents: the combining diacritical marks (U+0300 …)
that follow a Latin or Greek letter after NFKD.  Marks on other scripts carry meaning — the
Japanese dakuten (``ガ`` is not ``カ``), the Devanagari virama, Cyrillic ``й`` against ``и`` — and
are kept, as is every non-Latin letter: nothing is transliterated, so names in different
scripts never collide.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_name", "slugify_relation"]

_LATIN_OR_GREEK = (
    "A-Za-z\u00aa\u00ba\u00c0-\u02af"  # ASCII, Latin-1, Latin Extended-A/B, IPA
    "\u0370-\u03ff\u1d00-\u1dbf\u1e00-\u1fff"  # Greek, phonetic extensions, Latin/Greek ext.
    "\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f"  # Latin Extended-C/D/E
)
_DIACRITICS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_ACCENTS = re.compile(f"(?<=[{_LATIN_OR_GREEK}])[{_DIACRITICS}]+")
_SEPARATORS = re.compile(r"[\s_\-]+")
_NOT_SLUG = re.compile(r"[\W_]+")


def _strip_accents(text: str) -> str:
    """NFKD, then drop the diacritical marks that sit on a Latin or Greek letter."""
    if text.isascii():
        return text
    return _ACCENTS.sub("", unicodedata.normalize("NFKD", text))


def normalize_name(text: str) -> str:
    """The comparison key of a name: accents removed, case folded, separators unified.

    ``Configuração do servidor``, ``configuracao-do_servidor`` and ``  CONFIGURACAO   DO
    SERVIDOR`` all give ``configuracao do servidor``.

    Args:
        text: any title, alias or link target.

    Returns:
        NFKD-decomposed text without Latin/Greek accents, case folded, with every run of
        whitespace, ``-`` and ``_`` turned into one space, trimmed.
    """
    folded = _strip_accents(_strip_accents(text).casefold())
    return _SEPARATORS.sub(" ", folded).strip()


def slugify_relation(text: str) -> str:
    """The stored slug of a relation name: lowercase snake case.

    Latin letters lose their accents (``Relação`` → ``relacao``); letters of other scripts and
    digits are kept; everything else becomes a single ``_``.  Text with no letter or digit
    gives ``""``: the caller picks the default relation.

    Args:
        text: a relation name as a user or the model wrote it (``Depends On``).

    Returns:
        The slug (``depends_on``).
    """
    key = normalize_name(text)
    if key.isascii():
        return "_".join(_NOT_SLUG.sub(" ", key).split())
    # Not \w: it misses the combining marks that spell other scripts (Devanagari vowel signs).
    kept = "".join(c if c.isalnum() or unicodedata.category(c)[0] == "M" else " " for c in key)
    return "_".join(kept.split())
