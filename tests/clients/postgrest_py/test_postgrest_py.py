"""Engage driven by the real Python PostgREST client (postgrest-py, SyncPostgrestClient).

Every test reads and writes real rows of one organisation: calendars and deals are created through
the client itself, contacts (GET only in the API) with psql by the `contacts` fixture. Each test
puts a value of its own (`tag`) into the rows it creates and reads only those back.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from postgrest import SyncPostgrestClient
from postgrest.exceptions import APIError

from conftest import Contacts, Engage, make_client

CALENDAR_KEYS = {"id", "created_at", "updated_at", "organisation_id", "name", "type", "external_id"}
ERROR_KEYS = {
    "name",
    "message",
    "code",
    "is_transient",
    "timestamp",
    "status_code",
    "contact_support",
    "request_id",
    "details",
    "hint",
}


def names(rows: list[dict[str, Any]], key: str = "name") -> list[Any]:
    return [row[key] for row in rows]


def make_calendars(client: SyncPostgrestClient, tag: str) -> list[dict[str, Any]]:
    """Five calendars named `<tag> Alpha` .. `<tag> echo`; two carry an external_id."""
    rows = [
        {"name": f"{tag} Alpha", "external_id": f"{tag}-a"},
        {"name": f"{tag} Bravo", "external_id": None},
        {"name": f"{tag} Charlie", "external_id": f"{tag}-c"},
        {"name": f"{tag} Delta", "external_id": None},
        {"name": f"{tag} echo", "external_id": None},
    ]
    created = client.from_("calendar").insert(rows).execute().data
    assert len(created) == 5
    return created


def calendars(client: SyncPostgrestClient, tag: str, *columns: str, **select: Any):
    """A select on calendars narrowed to the test's own rows."""
    return client.from_("calendar").select(*(columns or ("*",)), **select).like("name", f"{tag} *")


def make_deals(client: SyncPostgrestClient, tag: str, contacts: Contacts) -> list[dict[str, Any]]:
    rows = [
        {"name": f"{tag} small", "value": 100, "currency": "EUR", "contact_id": contacts.ids["Ada"]},
        {"name": f"{tag} medium", "value": 250.5, "currency": "CHF", "contact_id": contacts.ids["Grace"]},
        {"name": f"{tag} large", "value": 1000, "currency": "USD", "contact_id": None},
        {"name": f"{tag} huge", "value": 5000, "currency": "CHF", "contact_id": contacts.ids["Ada"]},
    ]
    created = client.from_("deal").insert(rows).execute().data
    assert len(created) == 4
    return created


def deals(client: SyncPostgrestClient, tag: str, *columns: str, **select: Any):
    return client.from_("deal").select(*(columns or ("*",)), **select).like("name", f"{tag} *")


def contact_rows(client: SyncPostgrestClient, contacts: Contacts, *columns: str, **select: Any):
    return client.from_("contact").select(*(columns or ("*",)), **select).like("external_id", f"{contacts.tag}-*")


def by(rows: list[dict[str, Any]], key: str = "display_name") -> set[Any]:
    return {row[key] for row in rows}


# -- reading -----------------------------------------------------------------------------------


def test_list_select_star(client: SyncPostgrestClient, engage: Engage, tag: str) -> None:
    created = make_calendars(client, tag)
    response = client.from_("calendar").select("*").execute()
    assert isinstance(response.data, list)
    mine = [row for row in response.data if row["name"].startswith(f"{tag} ")]
    assert sorted(names(mine)) == sorted(names(created))
    for row in mine:
        assert set(row) == CALENDAR_KEYS
        assert row["organisation_id"] == engage.organisation_id
        assert row["type"] == "virtual"
    assert response.count is None


def test_list_contacts_written_with_psql(client: SyncPostgrestClient, contacts: Contacts) -> None:
    rows = contact_rows(client, contacts).execute().data
    assert by(rows) == {c["display_name"] for c in contacts.rows}
    ada = next(row for row in rows if row["display_name"] == "Ada")
    assert ada["id"] == contacts.ids["Ada"]
    assert ada["full_name"] == "Ada Lovelace"
    assert ada["email"] == "ada@example.com"
    assert ada["city"] == "Zürich"
    assert ada["is_blocked"] is False


def test_select_columns_and_alias(client: SyncPostgrestClient, tag: str) -> None:
    make_calendars(client, tag)
    rows = calendars(client, tag, "id", "label:name").execute().data
    assert len(rows) == 5
    for row in rows:
        assert set(row) == {"id", "label"}
    assert f"{tag} Alpha" in names(rows, "label")


def test_filter_eq_neq(client: SyncPostgrestClient, contacts: Contacts) -> None:
    assert by(contact_rows(client, contacts).eq("city", "Zürich").execute().data) == {"Ada", "Alan"}
    assert by(contact_rows(client, contacts).neq("city", "Zürich").execute().data) == {"Grace", "Edsger", "Barbara"}
    assert by(contact_rows(client, contacts).eq("id", contacts.ids["Grace"]).execute().data) == {"Grace"}


def test_filter_gt_gte_lt_lte(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    make_deals(client, tag, contacts)
    values = lambda q: sorted(row["value"] for row in q.execute().data)  # noqa: E731
    assert values(deals(client, tag).gt("value", 250.5)) == [1000, 5000]
    assert values(deals(client, tag).gte("value", 250.5)) == [250.5, 1000, 5000]
    assert values(deals(client, tag).lt("value", 1000)) == [100, 250.5]
    assert values(deals(client, tag).lte("value", 1000)) == [100, 250.5, 1000]
    # Several filters on one field are ANDed.
    assert values(deals(client, tag).gt("value", 100).lt("value", 5000)) == [250.5, 1000]


def test_filter_like_ilike(client: SyncPostgrestClient, contacts: Contacts) -> None:
    q = lambda: contact_rows(client, contacts)  # noqa: E731
    assert by(q().like("email", "*@example.com").execute().data) == {"Ada", "Alan"}
    assert by(q().like("email", "*@example.*").execute().data) == {"Ada", "Alan", "Barbara"}
    assert by(q().ilike("email", "*@EXAMPLE.*").execute().data) == {"Ada", "Alan", "Barbara", "Grace"}
    assert by(q().like("display_name", "A*").execute().data) == {"Ada", "Alan"}
    assert by(q().ilike("display_name", "*a").execute().data) == {"Ada", "Barbara"}


def test_filter_in(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    q = lambda: contact_rows(client, contacts)  # noqa: E731
    assert by(q().in_("city", ["Zürich", "Bern"]).execute().data) == {"Ada", "Alan", "Edsger"}
    # A value holding a comma is quoted by the client.
    assert by(q().in_("city", ["Lausanne, VD", "Basel"]).execute().data) == {"Barbara", "Grace"}
    assert by(q().in_("id", [contacts.ids["Ada"], contacts.ids["Edsger"]]).execute().data) == {"Ada", "Edsger"}
    make_deals(client, tag, contacts)
    assert sorted(names(deals(client, tag).in_("currency", ["CHF", "USD"]).execute().data)) == sorted(
        [f"{tag} medium", f"{tag} large", f"{tag} huge"]
    )


def test_filter_is(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    q = lambda: contact_rows(client, contacts)  # noqa: E731
    assert by(q().is_("email", None).execute().data) == {"Edsger"}
    assert by(q().is_("email", "null").execute().data) == {"Edsger"}
    assert len(q().is_("is_blocked", False).execute().data) == 5
    assert q().is_("is_blocked", True).execute().data == []
    make_deals(client, tag, contacts)
    assert names(deals(client, tag).is_("contact_id", None).execute().data) == [f"{tag} large"]


def test_filter_not(client: SyncPostgrestClient, contacts: Contacts) -> None:
    q = lambda: contact_rows(client, contacts)  # noqa: E731
    assert by(q().not_.eq("city", "Zürich").execute().data) == {"Grace", "Edsger", "Barbara"}
    assert by(q().not_.is_("email", None).execute().data) == {"Ada", "Grace", "Alan", "Barbara"}
    assert by(q().not_.in_("city", ["Zürich", "Basel"]).execute().data) == {"Edsger", "Barbara"}
    assert by(q().not_.ilike("display_name", "a*").execute().data) == {"Grace", "Edsger", "Barbara"}
    # `not_` applies to the next filter only.
    assert by(q().not_.eq("city", "Zürich").neq("city", "Bern").execute().data) == {"Grace", "Barbara"}


def test_filter_or(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    q = lambda: contact_rows(client, contacts)  # noqa: E731
    assert by(q().or_("city.eq.Bern,display_name.eq.Ada").execute().data) == {"Ada", "Edsger"}
    assert by(q().or_("email.is.null,and(city.eq.Zürich,display_name.like.Al*)").execute().data) == {
        "Edsger",
        "Alan",
    }
    assert by(q().or_('city.eq."Lausanne, VD",city.eq.Basel').execute().data) == {"Barbara", "Grace"}
    make_deals(client, tag, contacts)
    assert sorted(
        names(deals(client, tag).or_("value.gte.5000,and(currency.eq.CHF,value.lt.1000)").execute().data)
    ) == sorted([f"{tag} medium", f"{tag} huge"])


# -- order -------------------------------------------------------------------------------------


def test_order_by_name(client: SyncPostgrestClient, tag: str) -> None:
    make_calendars(client, tag)
    asc = names(calendars(client, tag).order("name").execute().data)
    assert asc == sorted(asc) and len(asc) == 5
    assert asc[0] == f"{tag} Alpha"
    desc = names(calendars(client, tag).order("name", desc=True).execute().data)
    assert desc == list(reversed(asc))


def test_order_contacts_by_display_name(client: SyncPostgrestClient, contacts: Contacts) -> None:
    rows = contact_rows(client, contacts).order("display_name").execute().data
    assert names(rows, "display_name") == ["Ada", "Alan", "Barbara", "Edsger", "Grace"]
    rows = contact_rows(client, contacts).order("display_name", desc=True).execute().data
    assert names(rows, "display_name") == ["Grace", "Edsger", "Barbara", "Alan", "Ada"]


def test_order_deals_by_won_at_with_nulls(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    created = make_deals(client, tag, contacts)
    ids = {row["name"]: row["id"] for row in created}
    client.from_("deal").update({"won_at": "2026-03-01T10:00:00+00:00"}).eq("id", ids[f"{tag} small"]).execute()
    client.from_("deal").update({"won_at": "2026-05-01T10:00:00+02:00"}).eq("id", ids[f"{tag} large"]).execute()
    rows = deals(client, tag).order("won_at", desc=True, nullsfirst=False).execute().data
    assert names(rows)[:2] == [f"{tag} large", f"{tag} small"]
    assert [row["won_at"] for row in rows[2:]] == [None, None]
    rows = deals(client, tag).order("won_at", nullsfirst=True).execute().data
    assert [row["won_at"] is None for row in rows] == [True, True, False, False]
    assert names(rows)[2:] == [f"{tag} small", f"{tag} large"]


@pytest.mark.order_by_id
def test_order_by_id(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    created = make_calendars(client, tag)
    ids = sorted(row["id"] for row in created)  # uuids compare as their lowercase text does
    assert names(calendars(client, tag).order("id", desc=True).execute().data, "id") == list(reversed(ids))
    assert names(calendars(client, tag).order("id").execute().data, "id") == ids
    deal_ids = sorted(row["id"] for row in make_deals(client, tag, contacts))
    assert names(deals(client, tag).order("id").execute().data, "id") == deal_ids
    assert names(deals(client, tag).order("id", desc=True).execute().data, "id") == list(reversed(deal_ids))
    contact_ids = sorted(contacts.ids.values())
    assert names(contact_rows(client, contacts).order("id").execute().data, "id") == contact_ids
    assert names(contact_rows(client, contacts).order("id", desc=True).execute().data, "id") == list(
        reversed(contact_ids)
    )


# -- paging and counts -------------------------------------------------------------------------


def test_range_with_exact_count(client: SyncPostgrestClient, tag: str) -> None:
    make_calendars(client, tag)
    first = calendars(client, tag, count="exact").order("name").range(0, 1).execute()
    assert first.count == 5
    assert names(first.data) == [f"{tag} Alpha", f"{tag} Bravo"]
    second = calendars(client, tag, count="exact").order("name").range(2, 3).execute()
    assert second.count == 5
    assert names(second.data) == [f"{tag} Charlie", f"{tag} Delta"]
    last = calendars(client, tag, count="exact").order("name").range(4, 9).execute()
    assert last.count == 5
    assert names(last.data) == [f"{tag} echo"]


def test_limit_offset_with_exact_count(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    make_calendars(client, tag)
    page = calendars(client, tag, count="exact").order("name").limit(2).offset(2).execute()
    assert page.count == 5
    assert names(page.data) == [f"{tag} Charlie", f"{tag} Delta"]
    page = calendars(client, tag, "name", count="exact").order("name", desc=True).limit(3).execute()
    assert page.count == 5
    assert names(page.data) == [f"{tag} echo", f"{tag} Delta", f"{tag} Charlie"]
    page = contact_rows(client, contacts, count="exact").order("display_name").limit(2).offset(1).execute()
    assert page.count == 5
    assert names(page.data, "display_name") == ["Alan", "Barbara"]


def test_counts_without_paging(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    make_calendars(client, tag)
    everything = calendars(client, tag, count="exact").execute()
    assert everything.count == 5 and len(everything.data) == 5
    filtered = calendars(client, tag, count="exact").not_.is_("external_id", None).execute()
    assert filtered.count == 2 and len(filtered.data) == 2
    assert contact_rows(client, contacts, count="estimated").eq("city", "Zürich").execute().count == 2
    assert contact_rows(client, contacts, count="planned").execute().count is not None


def test_head_with_count(client: SyncPostgrestClient, tag: str) -> None:
    make_calendars(client, tag)
    response = calendars(client, tag, count="exact", head=True).execute()
    assert response.count == 5
    assert response.data == []


# -- single rows -------------------------------------------------------------------------------


def test_single(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    created = make_calendars(client, tag)
    alpha = next(row for row in created if row["name"] == f"{tag} Alpha")
    response = client.from_("calendar").select("*").eq("id", alpha["id"]).single().execute()
    assert response.data == alpha
    response = contact_rows(client, contacts, "id", "display_name").eq("email", "alan@example.com").single().execute()
    assert response.data == {"id": contacts.ids["Alan"], "display_name": "Alan"}


def test_maybe_single(client: SyncPostgrestClient, tag: str) -> None:
    created = make_calendars(client, tag)
    bravo = next(row for row in created if row["name"] == f"{tag} Bravo")
    response = client.from_("calendar").select("id", "name").eq("id", bravo["id"]).maybe_single().execute()
    assert response is not None
    assert response.data == {"id": bravo["id"], "name": f"{tag} Bravo"}
    missing = client.from_("calendar").select("*").eq("id", str(uuid.uuid4())).maybe_single().execute()
    assert missing is None


# -- writing -----------------------------------------------------------------------------------


def test_insert_one(client: SyncPostgrestClient, engage: Engage, tag: str) -> None:
    response = client.from_("calendar").insert({"name": f"{tag} Front desk", "external_id": f"{tag}-fd"}).execute()
    assert len(response.data) == 1
    row = response.data[0]
    assert set(row) == CALENDAR_KEYS
    assert row["name"] == f"{tag} Front desk"
    assert row["external_id"] == f"{tag}-fd"
    assert row["type"] == "virtual"
    assert row["organisation_id"] == engage.organisation_id
    uuid.UUID(row["id"])
    assert calendars(client, tag).execute().data == [row]


def test_insert_one_with_id_and_type(client: SyncPostgrestClient, tag: str) -> None:
    given = str(uuid.uuid4())
    row = client.from_("calendar").insert({"id": given, "name": f"{tag} Room", "type": "virtual"}).execute().data[0]
    assert row["id"] == given


def test_insert_bulk(client: SyncPostgrestClient, tag: str) -> None:
    # Items with different keys: the client sends columns=... and a missing key becomes NULL.
    items = [
        {"name": f"{tag} Room 1"},
        {"name": f"{tag} Room 2", "external_id": f"{tag}-r2"},
        {"name": f"{tag} Room 3", "external_id": f"{tag}-r3"},
    ]
    response = client.from_("calendar").insert(items).execute()
    assert sorted(names(response.data)) == [f"{tag} Room 1", f"{tag} Room 2", f"{tag} Room 3"]
    by_name = {row["name"]: row for row in response.data}
    assert by_name[f"{tag} Room 1"]["external_id"] is None
    assert by_name[f"{tag} Room 2"]["external_id"] == f"{tag}-r2"
    assert all(row["type"] == "virtual" for row in response.data)
    read = calendars(client, tag).order("name").execute().data
    assert names(read) == [f"{tag} Room 1", f"{tag} Room 2", f"{tag} Room 3"]
    assert {row["id"] for row in read} == {row["id"] for row in response.data}


def test_insert_bulk_missing_keys_take_defaults(client: SyncPostgrestClient, tag: str) -> None:
    # default_to_null=False sends Prefer: missing=default: `type` left out of an item takes its default.
    items = [{"name": f"{tag} Room A", "type": "virtual"}, {"name": f"{tag} Room B"}]
    response = client.from_("calendar").insert(items, default_to_null=False).execute()
    assert sorted((row["name"], row["type"]) for row in response.data) == [
        (f"{tag} Room A", "virtual"),
        (f"{tag} Room B", "virtual"),
    ]


def test_insert_deals(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    one = (
        client.from_("deal")
        .insert(
            {
                "name": f"{tag} one",
                "value": 1234.5,
                "currency": "CHF",
                "contact_id": contacts.ids["Barbara"],
                "external_id": f"{tag}-one",
            }
        )
        .execute()
        .data
    )
    assert len(one) == 1
    assert one[0]["value"] == 1234.5
    assert one[0]["currency"] == "CHF"
    assert one[0]["contact_id"] == contacts.ids["Barbara"]
    many = make_deals(client, tag, contacts)
    assert sorted(row["currency"] for row in many) == ["CHF", "CHF", "EUR", "USD"]
    rows = deals(client, tag).eq("contact_id", contacts.ids["Ada"]).order("won_at").execute().data
    assert sorted(names(rows)) == [f"{tag} huge", f"{tag} small"]


def test_upsert_on_conflict_external_id(client: SyncPostgrestClient, tag: str) -> None:
    table = lambda: client.from_("calendar")  # noqa: E731
    created = table().upsert({"name": f"{tag} Room", "external_id": f"{tag}-room"}, on_conflict="external_id").execute()
    assert len(created.data) == 1
    first = created.data[0]
    updated = table().upsert(
        {"name": f"{tag} Room (new)", "external_id": f"{tag}-room"}, on_conflict="external_id"
    ).execute()
    assert len(updated.data) == 1
    assert updated.data[0]["id"] == first["id"]
    assert updated.data[0]["name"] == f"{tag} Room (new)"
    rows = calendars(client, tag, count="exact").eq("external_id", f"{tag}-room").execute()
    assert rows.count == 1
    assert rows.data[0]["name"] == f"{tag} Room (new)"
    # A bulk upsert: one existing row updated, one new row created.
    bulk = table().upsert(
        [
            {"name": f"{tag} Room (newer)", "external_id": f"{tag}-room"},
            {"name": f"{tag} Hall", "external_id": f"{tag}-hall"},
        ],
        on_conflict="external_id",
    ).execute()
    assert sorted(names(bulk.data)) == [f"{tag} Hall", f"{tag} Room (newer)"]
    read = calendars(client, tag).order("name").execute().data
    assert [(row["name"], row["external_id"]) for row in read] == [
        (f"{tag} Hall", f"{tag}-hall"),
        (f"{tag} Room (newer)", f"{tag}-room"),
    ]
    assert next(row for row in read if row["external_id"] == f"{tag}-room")["id"] == first["id"]


def test_upsert_ignore_duplicates(client: SyncPostgrestClient, tag: str) -> None:
    table = lambda: client.from_("calendar")  # noqa: E731
    table().insert({"name": f"{tag} Kept", "external_id": f"{tag}-k"}).execute()
    response = table().upsert(
        {"name": f"{tag} Ignored", "external_id": f"{tag}-k"}, on_conflict="external_id", ignore_duplicates=True
    ).execute()
    assert response.data == []
    assert names(calendars(client, tag).execute().data) == [f"{tag} Kept"]


def test_update(client: SyncPostgrestClient, tag: str) -> None:
    created = make_calendars(client, tag)
    alpha = next(row for row in created if row["name"] == f"{tag} Alpha")
    response = client.from_("calendar").update({"name": f"{tag} Alpha 2"}).eq("id", alpha["id"]).execute()
    assert len(response.data) == 1
    row = response.data[0]
    assert row["id"] == alpha["id"]
    assert row["name"] == f"{tag} Alpha 2"
    assert row["external_id"] == alpha["external_id"]
    assert row["updated_at"] >= alpha["updated_at"]
    read = calendars(client, tag).order("name").execute().data
    assert names(read) == [f"{tag} Alpha 2", f"{tag} Bravo", f"{tag} Charlie", f"{tag} Delta", f"{tag} echo"]


def test_update_many_and_deal(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    make_calendars(client, tag)
    response = (
        client.from_("calendar")
        .update({"external_id": None})
        .like("name", f"{tag} *")
        .not_.is_("external_id", None)
        .execute()
    )
    assert sorted(names(response.data)) == [f"{tag} Alpha", f"{tag} Charlie"]
    assert calendars(client, tag).not_.is_("external_id", None).execute().data == []
    created = make_deals(client, tag, contacts)
    small = next(row for row in created if row["name"] == f"{tag} small")
    row = (
        client.from_("deal")
        .update({"value": 150, "currency": "USD", "won_at": "2026-06-01T12:00:00+00:00"})
        .eq("id", small["id"])
        .execute()
        .data[0]
    )
    assert (row["value"], row["currency"], row["contact_id"]) == (150, "USD", contacts.ids["Ada"])
    assert row["won_at"].startswith("2026-06-01T12:00:00")


def test_delete(client: SyncPostgrestClient, tag: str) -> None:
    created = make_calendars(client, tag)
    bravo = next(row for row in created if row["name"] == f"{tag} Bravo")
    response = client.from_("calendar").delete().eq("id", bravo["id"]).execute()
    assert response.data == [bravo]
    assert client.from_("calendar").select("*").eq("id", bravo["id"]).execute().data == []
    assert len(calendars(client, tag).execute().data) == 4
    gone = client.from_("calendar").delete().in_("name", [f"{tag} Alpha", f"{tag} echo"]).execute()
    assert sorted(names(gone.data)) == [f"{tag} Alpha", f"{tag} echo"]
    assert sorted(names(calendars(client, tag).execute().data)) == [f"{tag} Charlie", f"{tag} Delta"]
    assert client.from_("calendar").delete().eq("id", bravo["id"]).execute().data == []


def test_delete_deal(client: SyncPostgrestClient, contacts: Contacts, tag: str) -> None:
    created = make_deals(client, tag, contacts)
    huge = next(row for row in created if row["name"] == f"{tag} huge")
    assert client.from_("deal").delete().eq("id", huge["id"]).execute().data == [huge]
    assert sorted(names(deals(client, tag).execute().data)) == sorted([f"{tag} small", f"{tag} medium", f"{tag} large"])


# -- errors ------------------------------------------------------------------------------------


def api_error(run) -> APIError:
    with pytest.raises(APIError) as caught:
        run()
    return caught.value


def assert_error(error: APIError, code: str) -> None:
    assert error.code == code, repr(error)
    assert isinstance(error.message, str) and error.message, repr(error)


@pytest.mark.error_body
def test_unknown_field_filter(client: SyncPostgrestClient) -> None:
    error = api_error(lambda: client.from_("calendar").select("*").eq("no_such_field", "x").execute())
    assert_error(error, "UNKNOWN_FIELD")
    assert "no_such_field" in error.message
    assert error.hint is None or isinstance(error.hint, str)
    error = api_error(lambda: client.from_("contact").select("*").ilike("nope", "*x*").execute())
    assert_error(error, "UNKNOWN_FIELD")


@pytest.mark.error_body
def test_single_over_two_rows(client: SyncPostgrestClient, tag: str) -> None:
    make_calendars(client, tag)
    error = api_error(lambda: calendars(client, tag).in_("name", [f"{tag} Alpha", f"{tag} Bravo"]).single().execute())
    assert_error(error, "NOT_ACCEPTABLE")
    error = api_error(lambda: client.from_("calendar").select("*").eq("id", str(uuid.uuid4())).single().execute())
    assert_error(error, "NOT_ACCEPTABLE")


def test_maybe_single_over_two_rows(client: SyncPostgrestClient, tag: str) -> None:
    # The client itself refuses more than one row for maybe_single (it sends a plain list request).
    make_calendars(client, tag)
    error = api_error(lambda: calendars(client, tag).maybe_single().execute())
    assert error.code == "406"


@pytest.mark.error_body
def test_order_on_a_field_not_allowed(client: SyncPostgrestClient) -> None:
    error = api_error(lambda: client.from_("calendar").select("*").order("external_id").execute())
    assert_error(error, "UNKNOWN_FIELD")
    error = api_error(lambda: client.from_("deal").select("*").order("name").execute())
    assert_error(error, "UNKNOWN_FIELD")


@pytest.mark.error_body
def test_malformed_filter_value(client: SyncPostgrestClient) -> None:
    error = api_error(lambda: client.from_("calendar").select("*").eq("id", "not-a-uuid").execute())
    assert_error(error, "INVALID_QUERY")
    assert "id" in error.message


@pytest.mark.error_body
def test_verb_not_offered(client: SyncPostgrestClient) -> None:
    error = api_error(lambda: client.from_("contact").insert({"display_name": "Nope"}).execute())
    assert_error(error, "METHOD_NOT_ALLOWED")


@pytest.mark.error_body
def test_unknown_resource(client: SyncPostgrestClient) -> None:
    error = api_error(lambda: client.from_("no_such_resource").select("*").execute())
    assert_error(error, "NOT_FOUND")


@pytest.mark.error_body
def test_validation_failed(client: SyncPostgrestClient, tag: str) -> None:
    error = api_error(lambda: client.from_("calendar").insert({"name": f"{tag} G", "type": "google"}).execute())
    assert_error(error, "VALIDATION_FAILED")
    error = api_error(lambda: client.from_("deal").insert({"name": f"{tag} D", "currency": "GBP"}).execute())
    assert_error(error, "VALIDATION_FAILED")
    error = api_error(lambda: client.from_("calendar").insert({"name": f"{tag} X", "colour": "red"}).execute())
    assert_error(error, "UNKNOWN_FIELD")
    assert calendars(client, tag).execute().data == []


@pytest.mark.error_body
def test_conflict_and_reference_not_found(client: SyncPostgrestClient, tag: str) -> None:
    client.from_("calendar").insert({"name": f"{tag} One", "external_id": f"{tag}-dup"}).execute()
    error = api_error(
        lambda: client.from_("calendar").insert({"name": f"{tag} Two", "external_id": f"{tag}-dup"}).execute()
    )
    assert_error(error, "CONFLICT")
    error = api_error(
        lambda: client.from_("deal").insert({"name": f"{tag} D", "contact_id": str(uuid.uuid4())}).execute()
    )
    assert_error(error, "REFERENCE_NOT_FOUND")


@pytest.mark.error_body
def test_write_without_filter(client: SyncPostgrestClient) -> None:
    error = api_error(lambda: client.from_("calendar").update({"name": "everything"}).execute())
    assert_error(error, "FILTER_REQUIRED")
    error = api_error(lambda: client.from_("deal").delete().execute())
    assert_error(error, "FILTER_REQUIRED")


@pytest.mark.error_body
def test_bad_token(engage: Engage) -> None:
    with make_client(engage.url, "engage_" + "x" * 43) as other:
        error = api_error(lambda: other.from_("calendar").select("*").execute())
    assert_error(error, "UNAUTHORIZED")


@pytest.mark.error_body
def test_error_body_keys(client: SyncPostgrestClient) -> None:
    """The whole error body, read through the client's own HTTP session."""
    response = client.session.get("calendar", params={"select": "*", "no_such_field": "eq.1"})
    assert response.status_code == 400
    body = response.json()
    assert ERROR_KEYS <= set(body), sorted(ERROR_KEYS - set(body))
    assert body["name"] == "APIError"
    assert body["code"] == "UNKNOWN_FIELD"
    assert body["status_code"] == 400
    assert body["is_transient"] is False
    assert body["contact_support"] is False
    assert body["request_id"] == response.headers["request-id"]
    assert body["details"] is None or isinstance(body["details"], str)
    assert body["hint"] is None or isinstance(body["hint"], str)
    # An error with nothing to add carries the keys with null.
    response = client.session.get("no_such_resource")
    assert response.status_code == 404
    body = response.json()
    assert ERROR_KEYS <= set(body), sorted(ERROR_KEYS - set(body))
