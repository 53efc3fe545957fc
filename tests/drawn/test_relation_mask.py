"""vaultsync.drawn.rules.relation_slug: a secret typed as a relation is masked before the slug."""

from __future__ import annotations

from vaultsync.drawn.rules import relation_slug

SECRET = "Zr8kQ4mW9xPt"  # noqa: S105 - planted, not a credential


def test_relation_secret_is_masked_before_it_is_slugified() -> None:
    """``db_password: Zr8k…`` leaves no trace of the value in the stored relation, any case."""
    slug = relation_slug(f"db_password: {SECRET}")
    assert SECRET.lower() not in slug.lower()
    assert slug.startswith("db_password")


def test_relation_slug_of_a_masked_relation_is_stable() -> None:
    """The stored (masked) relation maps to itself."""
    slug = relation_slug(f"db_password: {SECRET}")
    assert relation_slug(slug) == slug
