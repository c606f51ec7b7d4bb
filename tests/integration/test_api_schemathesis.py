"""Schemathesis walks the OpenAPI schema: every operation answers as documented.

Driven through Hypothesis directly (its pytest plugin does not run on pytest 9).
"""
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import ignored_auth, positive_data_acceptance

EXAMPLES_PER_OPERATION = 8


@pytest.fixture
def keep_test_connection():
    """Like Django's test client: requests must not close the test's DB connection."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(db, seed_rack_cluster, redis_url, keep_test_connection):
    from django.core.wsgi import get_wsgi_application
    from drf_spectacular.generators import SchemaGenerator

    from cluster.services import topic_create

    topic_create(name="orders", partitions=4, replication=3)
    schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    schema.app = get_wsgi_application()
    return schema


@pytest.fixture
def operator_token(operator) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.create(user=operator).key


def _check(operation, headers: dict[str, str]) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def run(case):
        # ignored_auth would send generated credentials; we always send a valid token.
        # positive_data_acceptance expects every schema-valid body to be accepted,
        # but the services also refuse by cluster state (unknown SPUs, id clashes).
        case.call_and_validate(headers=headers,
                               excluded_checks=[ignored_auth, positive_data_acceptance])
    run()


def test_every_operation_answers_as_its_schema_says(api_schema, operator_token):
    # Schemathesis's WSGI calls ask for gzip (requests' default headers) but read the body
    # as sent: the answers' compression has its own test (test_page_compression.py).
    headers = {"Authorization": f"Token {operator_token}", "Accept-Encoding": "identity"}
    failures, checked = [], 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        try:
            _check(operation, headers)
        except Exception as exc:  # collect every operation's failure, then report them all
            failures.append(f"{operation.label}: {str(exc)[:1500]}")
        checked += 1
    assert checked >= 15
    assert not failures, "\n\n".join(failures)
