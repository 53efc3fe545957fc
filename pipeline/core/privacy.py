"""Profile key → private or not; pure.

A profile field is private when ChatCLI flagged it ``sensitive`` in ``field_meta`` *or* when its
key names a kind of personal data that must never be quoted into the vault.  The key is split
into words (``snake_case``, ``kebab-case``, ``camelCase``, dots and spaces all split), and a
field is private when one word, or two or three adjacent words joined with ``_``, is a term
below.  Matching is by whole word: ``tax`` marks ``tax_id`` but not ``syntax``, ``age`` marks
``age`` but not ``language``.

ChatCLI's author and many of its users write Portuguese, so the common Portuguese words are
listed next to the English ones (accents are dropped before matching: ``saúde`` → ``saude``).
"""

from __future__ import annotations

import re
import unicodedata

_FINANCE = """
    finance finances financial salary salaries wage wages income earnings bank banking
    account_number iban swift credit_card card_number debt debts loan loans mortgage tax taxes
    net_worth investment investments salario renda banco conta_bancaria imposto impostos
"""
_DOCUMENTS = """
    document documents passport ssn social_security id_number national_id tax_id
    drivers_license driver_license license_number cpf rg cnh documento documentos
"""
_CONTACT = """
    contact contacts phone phones telephone mobile cell email emails e_mail address addresses
    home_address street zip zipcode zip_code postal_code telefone celular endereco contato
"""
_HEALTH = """
    health medical medication medications diagnosis diagnoses illness disease condition
    conditions disability allergy allergies therapy mental_health pregnancy saude doenca
"""
_FAMILY = """
    family spouse wife husband partner children child kids kid parents marital marital_status
    relationship familia esposa marido filhos
"""
_IDENTITY = """
    religion religious faith politics political ethnicity race sexual sexuality gender
    birthday birthdate birth_date date_of_birth dob age religiao
"""
_SECRETS = """
    password passwords secret secrets token tokens pin senha
"""

PRIVATE_TERMS: frozenset[str] = frozenset(
    " ".join((_FINANCE, _DOCUMENTS, _CONTACT, _HEALTH, _FAMILY, _IDENTITY, _SECRETS)).split()
)
"""Every word (or ``_``-joined run of words) that makes a profile key private."""

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def key_words(key: str) -> tuple[str, ...]:
    """The lowercased, accent-free words of a key: ``homeAddress`` → ``("home", "address")``."""
    ascii_key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode("ascii")
    return tuple(word.lower() for word in _WORD.findall(ascii_key))


def is_private_key(key: str) -> bool:
    """Whether a profile key names personal data (see the module docstring for the rule)."""
    words = key_words(key)
    for size in (1, 2, 3):
        for start in range(len(words) - size + 1):
            if "_".join(words[start : start + size]) in PRIVATE_TERMS:
                return True
    return False
