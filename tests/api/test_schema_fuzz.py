"""Property-based: requests generated from the OpenAPI schema never get a 500 and match the documented shapes."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from api.main import create_app
from api.settings import Settings
from kg.store.base import Store

# The schema is taken from the app now, without starting it; the session's store is handed in by the
# fixture below before the first request starts the app. A short Cypher time limit bounds any costly query.
app = create_app(Settings(cypher_timeout_s=1.0))
schema = schemathesis.openapi.from_dict(app.openapi())
schema.app = app


@pytest.fixture(autouse=True)
def _serve_test_store(store: Store) -> None:
    app.state.store = store


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case[Any]) -> None:
    # A schema-valid string need not be valid Cypher: a 400 for it is right, not a rejected valid request.
    # Nor need two schema-valid periods be in order (from before to), or a day exist (2025-02-30): a 422.
    excluded = ([schemathesis.checks.positive_data_acceptance]
                if case.operation.path in ("/cypher", "/trends", "/view/trends") else [])
    case.call_and_validate(excluded_checks=excluded)
