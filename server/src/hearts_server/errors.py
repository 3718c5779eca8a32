"""Service errors and the one table that maps every failure to a status code and a reason.

The application layer raises :class:`ServiceError` with a transport-neutral :class:`Code`; the
gRPC adapter turns it into a status with ``google.rpc.ErrorInfo`` (domain ``hearts.v1``, the
stable ``reason``) and, for a refused move, a ``hearts.v1.MoveRejection`` with the caller's legal
cards. Engine errors map here too, so the engine's reason string reaches the client unchanged.
"""

from __future__ import annotations

import enum

from hearts_engine import Card, IllegalActionError, MalformedError, MalformedReason, Reason

__all__ = ["ERROR_DOMAIN", "REASONS", "Code", "ServiceError", "from_engine"]

ERROR_DOMAIN = "hearts.v1"


class Code(enum.Enum):
    """Transport-neutral error classes; the names are gRPC's."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    ABORTED = "ABORTED"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"


# Every reason and its code: the engine's refusals of a move (MUST_FOLLOW_SUIT, ...) are all
# FAILED_PRECONDITION, its malformed inputs (INVALID_CARD, ...) INVALID_ARGUMENT, and then the
# server's own.
REASONS: dict[str, Code] = {
    **{str(reason): Code.FAILED_PRECONDITION for reason in Reason},
    **{str(reason): Code.INVALID_ARGUMENT for reason in MalformedReason},
    "INVALID_REQUEST": Code.INVALID_ARGUMENT,
    "INVALID_TABLE_NAME": Code.INVALID_ARGUMENT,
    "INVALID_PAGE_TOKEN": Code.INVALID_ARGUMENT,
    "REQUEST_ID_REUSED": Code.INVALID_ARGUMENT,
    "TABLE_NOT_FOUND": Code.NOT_FOUND,
    "TOKEN_MISSING": Code.UNAUTHENTICATED,
    "TOKEN_INVALID": Code.UNAUTHENTICATED,
    "TOKEN_EXPIRED": Code.UNAUTHENTICATED,
    "TOKEN_REVOKED": Code.UNAUTHENTICATED,
    "IDENTITY_REQUIRED": Code.UNAUTHENTICATED,
    "IDENTITY_INVALID": Code.UNAUTHENTICATED,
    "IDENTITY_EXPIRED": Code.UNAUTHENTICATED,
    "IDENTITY_NOT_ACCEPTED": Code.INVALID_ARGUMENT,
    "IDENTITY_UNAVAILABLE": Code.UNAVAILABLE,
    "ALREADY_SEATED": Code.ALREADY_EXISTS,
    "WRONG_TABLE": Code.PERMISSION_DENIED,
    "NOT_A_PLAYER": Code.PERMISSION_DENIED,
    "NOT_TABLE_CREATOR": Code.PERMISSION_DENIED,
    "SEAT_TAKEN": Code.ALREADY_EXISTS,
    "TABLE_FULL": Code.FAILED_PRECONDITION,
    "GAME_NOT_OVER": Code.FAILED_PRECONDITION,
    "WEBHOOKS_DISABLED": Code.FAILED_PRECONDITION,
    "ETAG_MISMATCH": Code.ABORTED,
    "CONFLICT": Code.ABORTED,
    "TOO_MANY_STREAMS": Code.RESOURCE_EXHAUSTED,
    "TOO_MANY_STREAMS_FROM_ADDRESS": Code.RESOURCE_EXHAUSTED,
    "OVERLOADED": Code.RESOURCE_EXHAUSTED,
    "TOO_MANY_REACTIONS": Code.RESOURCE_EXHAUSTED,
    "TOO_MANY_TABLES": Code.RESOURCE_EXHAUSTED,
    "STORE_UNAVAILABLE": Code.UNAVAILABLE,
    "SHUTTING_DOWN": Code.UNAVAILABLE,
    "STREAM_LAGGED": Code.UNAVAILABLE,
    "RECORD_UNSUPPORTED": Code.UNAVAILABLE,
    "RECORD_UNREADABLE": Code.INTERNAL,
    "INTERNAL": Code.INTERNAL,
}


class ServiceError(Exception):
    """A request failed for a reason the caller can act on."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        legal_cards: tuple[Card, ...] | None = None,
        cards_to_pass: int = 0,
    ) -> None:
        super().__init__(message)
        self.reason = str(reason)  # an engine reason is a StrEnum; the API wants its string
        self.code = REASONS[self.reason]
        self.message = message
        self.legal_cards = legal_cards
        self.cards_to_pass = cards_to_pass


def from_engine(
    error: IllegalActionError | MalformedError,
    *,
    legal_cards: tuple[Card, ...] | None = None,
    cards_to_pass: int = 0,
) -> ServiceError:
    """The service error for an engine refusal, keeping the engine's reason string."""
    return ServiceError(
        str(error.reason),
        str(error),
        legal_cards=legal_cards,
        cards_to_pass=cards_to_pass,
    )
