"""Checks the generated hearts.v1 descriptors: every RPC of the TableService exists, has its own
request and response messages, and maps to REST through a google.api.http annotation.
"""

import pytest
from google.api import annotations_pb2, http_pb2
from google.protobuf import any_pb2, descriptor

from hearts.v1 import error_details_pb2, table_event_pb2, table_pb2, table_service_pb2

SERVICE = table_service_pb2.DESCRIPTOR.services_by_name["TableService"]

# RPC name -> (HTTP verb, path template, body); the REST mapping promised in docs/api.md.
EXPECTED_HTTP = {
    "GetTable": ("get", "/v1/{name=tables/*}", ""),
    "ListTables": ("get", "/v1/tables", ""),
    "CreateTable": ("post", "/v1/tables", "table"),
    "DeleteTable": ("delete", "/v1/{name=tables/*}", ""),
    "JoinTable": ("post", "/v1/{name=tables/*}:join", "*"),
    "LeaveTable": ("post", "/v1/{name=tables/*}:leave", "*"),
    "PassCards": ("post", "/v1/{name=tables/*}:passCards", "*"),
    "PlayCard": ("post", "/v1/{name=tables/*}:playCard", "*"),
    "RematchTable": ("post", "/v1/{name=tables/*}:rematch", "*"),
    "SuggestMove": ("get", "/v1/{name=tables/*}:suggestMove", ""),
    "SendReaction": ("post", "/v1/{name=tables/*}:sendReaction", "*"),
    "QuickJoin": ("post", "/v1/tables:quickJoin", "*"),
    "ListPlayerTables": ("post", "/v1/tables:listPlayerTables", "*"),
    "WatchTable": ("get", "/v1/{name=tables/*}:watch", ""),
}


def _http_rule(method: descriptor.MethodDescriptor) -> http_pb2.HttpRule:
    options = method.GetOptions()
    assert options.HasExtension(annotations_pb2.http), f"{method.name} has no google.api.http"
    return options.Extensions[annotations_pb2.http]


def test_service_is_hearts_v1_table_service() -> None:
    assert SERVICE.full_name == "hearts.v1.TableService"


def test_service_has_exactly_the_expected_rpcs() -> None:
    assert {method.name for method in SERVICE.methods} == set(EXPECTED_HTTP)


@pytest.mark.parametrize("rpc", sorted(EXPECTED_HTTP))
def test_every_rpc_has_its_own_request_and_response(rpc: str) -> None:
    method = SERVICE.methods_by_name[rpc]
    assert method.input_type.full_name == f"hearts.v1.{rpc}Request"
    assert method.output_type.full_name == f"hearts.v1.{rpc}Response"


@pytest.mark.parametrize("rpc", sorted(EXPECTED_HTTP))
def test_every_rpc_has_an_http_annotation(rpc: str) -> None:
    verb, path, body = EXPECTED_HTTP[rpc]
    rule = _http_rule(SERVICE.methods_by_name[rpc])
    assert rule.WhichOneof("pattern") == verb
    assert getattr(rule, verb) == path
    assert rule.body == body


def test_only_watch_table_streams() -> None:
    streaming = {m.name for m in SERVICE.methods if m.server_streaming or m.client_streaming}
    assert streaming == {"WatchTable"}
    assert not SERVICE.methods_by_name["WatchTable"].client_streaming


@pytest.mark.parametrize(
    "rpc",
    [
        "CreateTable",
        "DeleteTable",
        "JoinTable",
        "LeaveTable",
        "PassCards",
        "PlayCard",
        "RematchTable",
    ],
)
def test_mutations_take_a_request_id(rpc: str) -> None:
    fields = SERVICE.methods_by_name[rpc].input_type.fields_by_name
    assert "request_id" in fields


# RematchTable acts on a new table (and only names the finished one), so it takes no etag.
@pytest.mark.parametrize("rpc", ["DeleteTable", "JoinTable", "LeaveTable", "PassCards", "PlayCard"])
def test_mutations_on_an_existing_table_take_an_etag(rpc: str) -> None:
    fields = SERVICE.methods_by_name[rpc].input_type.fields_by_name
    assert "etag" in fields


def test_rules_fields_can_tell_unset_from_false() -> None:
    rules = table_pb2.Rules()
    assert not rules.HasField("pass_cards")
    rules.pass_cards = False
    assert rules.HasField("pass_cards")


def test_rules_have_the_variant_flags_of_the_rules_page() -> None:
    names = {field.name for field in table_pb2.Rules.DESCRIPTOR.fields}
    assert names == {
        "pass_cards",
        "no_points_on_first_trick",
        "can_lead_any_club",
        "must_break_hearts",
        "queen_breaks_hearts",
        "can_lead_hearts_instead_of_queen",
        "jack_of_diamonds_bonus",
        "avoid_all_tricks_bonus",
        "target_score",
        "moon_scoring",
    }


def test_rank_numbers_are_face_values() -> None:
    assert table_pb2.RANK_TWO == 2
    assert table_pb2.RANK_TEN == 10
    assert table_pb2.RANK_ACE == 14


def test_every_enum_starts_with_unspecified() -> None:
    for enum in table_pb2.DESCRIPTOR.enum_types_by_name.values():
        assert enum.values_by_number[0].name == f"{_upper_snake(enum.name)}_UNSPECIFIED"


def test_table_event_oneof_has_every_event() -> None:
    oneof = table_event_pb2.TableEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert {field.message_type.name for field in oneof.fields if field.message_type} == {
        "PlayerJoinedEvent",
        "PlayerLeftEvent",
        "RoundStartedEvent",
        "HandDealtEvent",
        "SeatPassedEvent",
        "CardsPassedEvent",
        "CardsReceivedEvent",
        "CardPlayedEvent",
        "HeartsBrokenEvent",
        "TrickWonEvent",
        "RoundScoredEvent",
        "GameOverEvent",
        "TurnChangedEvent",
        "TableDeletedEvent",
        "TurnTimedOutEvent",
        "RematchCreatedEvent",
        "ReactionEvent",
        "PresenceChangedEvent",
    }


def test_move_rejection_round_trips_through_a_status_detail() -> None:
    rejection = error_details_pb2.MoveRejection(
        reason="MUST_FOLLOW_SUIT",
        legal_cards=[table_pb2.Card(suit=table_pb2.SUIT_CLUBS, rank=table_pb2.RANK_TWO)],
    )
    detail = any_pb2.Any()
    detail.Pack(rejection)
    assert detail.type_url.endswith("/hearts.v1.MoveRejection")
    decoded = error_details_pb2.MoveRejection()
    assert detail.Unpack(decoded)
    assert decoded == rejection


def _upper_snake(name: str) -> str:
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name)).upper()
