"""Schemathesis against the served OpenAPI document: valid and invalid input, no server error.

Every operation gets a small, derandomised budget of generated requests (so a run takes a few
seconds and always the same ones), in both modes: schema-valid data must be answered per the
document, invalid data must be a 4xx.  All of schemathesis's checks run; the one the issue
requires is ``not_a_server_error``.  A doc type is any word in the document (a note a person
writes may have any ``kind``), so for the operations that filter by it schema-valid data may also
be the documented 400 of a doc type no note has.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from helpers import DEMO_STORE, serving
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from vaults import demo_vault
from vaultsync.http.auth import vault_token
from vaultsync.http.server import make_app

EXAMPLES = 30
OPERATIONS = [
    ("GET", "/v1/vault/documents"),
    ("GET", "/v1/vault/documents/{doc_id}"),
    ("GET", "/v1/vault/documents/{doc_id}/links"),
    ("POST", "/v1/vault/search"),
    ("POST", "/v1/vault/links"),
]
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]
"""Schemathesis's default answers to schema-valid data (``positive_data_acceptance``)."""
BY_DOC_TYPE = {("GET", "/v1/vault/documents"), ("POST", "/v1/vault/search")}
"""The operations with a doc type filter: 400 when it names no kind there is."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The API over the demo vault on loopback, and its bearer header (a private store copy)."""
    root = tmp_path_factory.mktemp("schemathesis")
    state = root / "state"
    shutil.copytree(DEMO_STORE, state)
    vault = demo_vault(state, root / "vault")
    app = make_app(vault, state, host="127.0.0.1", refresh=0, environ={})
    with serving(app) as url:
        yield url, {"Authorization": f"Bearer {vault_token(vault)}"}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=str)
def test_no_server_errors(
    served: tuple[str, dict[str, str]], method: str, path: str, mode: GenerationMode
) -> None:
    """Generated requests with the token never get a 5xx and every answer matches the document."""
    url, bearer = served
    accepted = [*ACCEPTED, "400"] if (method, path) in BY_DOC_TYPE else ACCEPTED
    config = SchemathesisConfig.from_dict(
        {"checks": {"positive_data_acceptance": {"expected-statuses": accepted}}}
    )
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", headers=bearer, config=config)
    operation = schema[path][method]

    @given(operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any) -> None:
        response = case.call(base_url=url, headers=bearer)
        assert response.status_code != 401, "the bearer token was not sent"
        assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text}"
        case.validate_response(response, additional_checks=[not_a_server_error])

    check()
