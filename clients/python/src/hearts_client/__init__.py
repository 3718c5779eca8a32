"""Python client for the Hearts TableService (``hearts.v1``).

:class:`HeartsClient` (asyncio) and :class:`SyncHeartsClient` (blocking) call the service with
Pythonic arguments: cards in notation (``"QS"``, ``"10H"``), rules as a dict, bots as
``{1: "heuristic"}``. They keep seat tokens, retry safely with one request_id per call, resume
watch streams, and raise :class:`HeartsError` subclasses that carry the server's stable reason.
The generated messages and stubs live in ``hearts.v1``; the ``hearts`` command is
:mod:`hearts_client.cli`.
"""

from hearts_client.cards import (
    SUIT_SYMBOLS,
    CardLike,
    InvalidCardError,
    card,
    card_label,
    card_str,
    cards,
    format_cards,
    sort_cards,
)
from hearts_client.client import (
    REACTIONS,
    BotLevelLike,
    CreatedTable,
    HeartsClient,
    JoinedTable,
    PlayerTable,
    ReactionLike,
    RulesLike,
    Suggestion,
    TablePage,
    bot_level,
    make_rules,
    reaction,
    table_name,
)
from hearts_client.errors import (
    ERROR_DOMAIN,
    AuthError,
    ConflictError,
    HeartsError,
    IllegalMoveError,
    InvalidRequestError,
    NotFoundError,
    SeatTakenError,
    UnavailableError,
)
from hearts_client.sync import SyncHeartsClient
from hearts_client.webhooks import WebhookError, verify_webhook

__all__ = [
    "ERROR_DOMAIN",
    "REACTIONS",
    "SUIT_SYMBOLS",
    "AuthError",
    "BotLevelLike",
    "CardLike",
    "ConflictError",
    "CreatedTable",
    "HeartsClient",
    "HeartsError",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidRequestError",
    "JoinedTable",
    "NotFoundError",
    "PlayerTable",
    "ReactionLike",
    "RulesLike",
    "SeatTakenError",
    "Suggestion",
    "SyncHeartsClient",
    "TablePage",
    "UnavailableError",
    "WebhookError",
    "bot_level",
    "card",
    "card_label",
    "card_str",
    "cards",
    "format_cards",
    "make_rules",
    "reaction",
    "sort_cards",
    "table_name",
    "verify_webhook",
]
