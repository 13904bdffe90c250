"""Fixtures for driving Engage with postgrest-py (tests/clients/postgrest-py.sh sets the environment).

ENGAGE_URL              base URL of the API, http://127.0.0.1:<port>/api/v1
ENGAGE_TOKEN            an API token of the organisation below
ENGAGE_ORGANISATION_ID  the token's organisation
ENGAGE_DATABASE_URL     the server's database, for rows the API cannot create (contacts: GET only)
"""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import pytest
from postgrest import SyncPostgrestClient
from postgrest.constants import DEFAULT_POSTGREST_CLIENT_HEADERS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "error_body: reads an error through postgrest-py, which needs `details` and `hint` keys in the body",
    )
    config.addinivalue_line("markers", "order_by_id: orders by `id`, allowed on every resource")


@dataclass(frozen=True)
class Engage:
    url: str
    token: str
    organisation_id: str
    database_url: str


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise pytest.UsageError(f"{name} is not set: run these tests through tests/clients/postgrest-py.sh")
    return value


@pytest.fixture(scope="session")
def engage() -> Engage:
    return Engage(
        url=_env("ENGAGE_URL"),
        token=_env("ENGAGE_TOKEN"),
        organisation_id=_env("ENGAGE_ORGANISATION_ID"),
        database_url=_env("ENGAGE_DATABASE_URL"),
    )


def make_client(url: str, token: str) -> SyncPostgrestClient:
    """The sync client as an application would build it: the client's default headers and a bearer token."""
    return SyncPostgrestClient(url, headers={**DEFAULT_POSTGREST_CLIENT_HEADERS, "Authorization": f"Bearer {token}"})


@pytest.fixture(scope="session")
def client(engage: Engage) -> Iterator[SyncPostgrestClient]:
    with make_client(engage.url, engage.token) as c:
        yield c


@pytest.fixture
def tag() -> str:
    """A value unique to one test, put into the rows it creates so that it reads only its own rows."""
    return f"pyt-{uuid.uuid4().hex[:12]}"


def sql_literal(value: Optional[str]) -> str:
    if value is None:
        return "NULL"
    return "'" + str(value).replace("'", "''") + "'"


def psql(database_url: str, sql: str) -> str:
    done = subprocess.run(
        ["psql", database_url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Contacts:
    """Contacts written with psql (the API offers GET only on contact); `ids` by display_name."""

    tag: str
    ids: dict[str, str]
    rows: list[dict[str, Any]]


CONTACTS = [
    # full_name, display_name, email, city
    ("Ada Lovelace", "Ada", "ada@example.com", "Zürich"),
    ("Grace Hopper", "Grace", "GRACE@Example.org", "Basel"),
    ("Alan Turing", "Alan", "alan@example.com", "Zürich"),
    ("Edsger Dijkstra", "Edsger", None, "Bern"),
    ("Barbara Liskov", "Barbara", "barbara@example.net", "Lausanne, VD"),
]


@pytest.fixture(scope="session")
def contacts(engage: Engage) -> Contacts:
    ctag = f"pyc-{uuid.uuid4().hex[:12]}"
    rows = []
    values = []
    for i, (full_name, display_name, email, city) in enumerate(CONTACTS):
        external_id = f"{ctag}-{i}"
        rows.append(
            {
                "full_name": full_name,
                "display_name": display_name,
                "email": email,
                "city": city,
                "external_id": external_id,
            }
        )
        values.append(
            "("
            + ", ".join(
                sql_literal(v)
                for v in (engage.organisation_id, full_name, display_name, email, city, external_id)
            )
            + ")"
        )
    out = psql(
        engage.database_url,
        "INSERT INTO contact (organisation_id, full_name, display_name, email, city, external_id) VALUES "
        + ", ".join(values)
        + " RETURNING display_name || '|' || id",
    )
    ids = dict(line.split("|", 1) for line in out.splitlines() if line)
    assert len(ids) == len(CONTACTS), out
    for row in rows:
        row["id"] = ids[row["display_name"]]
    return Contacts(tag=ctag, ids=ids, rows=rows)
