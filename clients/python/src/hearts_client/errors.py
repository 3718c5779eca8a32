"""The client's exceptions, and the one table that maps a gRPC status to them.

Every failed call raises a :class:`HeartsError` subclass chosen by the status code; the stable
``reason`` (``MUST_FOLLOW_SUIT``, ``TOKEN_INVALID``...) comes from the ``google.rpc.ErrorInfo``
detail, and a refused move's ``hearts.v1.MoveRejection`` supplies ``legal_cards`` and
``cards_to_pass``, so a caller can pick a legal card without another round trip. Nothing here
talks to the network.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from hearts.v1 import error_details_pb2 as hearts_errors_pb
from hearts.v1 import table_pb2 as pb

__all__ = [
    "ERROR_DOMAIN",
    "AuthError",
    "ConflictError",
    "HeartsError",
    "IllegalMoveError",
    "InvalidRequestError",
    "NotFoundError",
    "SeatTakenError",
    "UnavailableError",
    "error_from_rpc",
]

ERROR_DOMAIN = "hearts.v1"
"""The ``ErrorInfo.domain`` of every error the Hearts server raises."""

_DETAILS_KEY = "grpc-status-details-bin"


class HeartsError(Exception):
    """A call to the Hearts service failed.

    Attributes:
        code: the ``grpc.StatusCode`` of the failure.
        reason: the stable machine-readable reason from ``google.rpc.ErrorInfo``, such as
            ``"MUST_FOLLOW_SUIT"``; the status code's name (``"UNAVAILABLE"``) when the
            failure carried none, e.g. when the server could not be reached.
        message: the server's human-readable message.
        legal_cards: for a refused move, the cards the caller may play now (empty otherwise).
        cards_to_pass: for a refused move, how many cards the caller must still pass.
        metadata: the ``ErrorInfo`` metadata (for example ``{"table": "tables/..."}``).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        *,
        legal_cards: tuple[pb.Card, ...] = (),
        cards_to_pass: int = 0,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{reason}: {message}" if message else reason)
        self.code = code
        self.reason = reason
        self.message = message
        self.legal_cards = legal_cards
        self.cards_to_pass = cards_to_pass
        self.metadata: Mapping[str, str] = dict(metadata or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.reason!r}, {self.message!r})"


class InvalidRequestError(HeartsError):
    """The request is malformed (INVALID_ARGUMENT): a bad table name, card, seat or rules.

    ``IDENTITY_NOT_ACCEPTED``: the call carried an identity token, and the server checks none
    (it was started without an identity secret or key set); call without one.
    """


class IllegalMoveError(HeartsError):
    """The rules or the table's state forbid the call now (FAILED_PRECONDITION).

    A refused pass or play (``MUST_FOLLOW_SUIT``, ``NOT_YOUR_TURN``, ``WRONG_PASS_COUNT``...)
    carries ``legal_cards`` and ``cards_to_pass``. ``TABLE_FULL`` on a join is raised as this
    class too, with no cards.
    """


class NotFoundError(HeartsError):
    """No such table, or it was deleted (NOT_FOUND, ``TABLE_NOT_FOUND``)."""


class AuthError(HeartsError):
    """The token is missing, forged, expired or for another table or seat.

    UNAUTHENTICATED (``TOKEN_MISSING``, ``TOKEN_INVALID``, ``TOKEN_EXPIRED``, ``TOKEN_REVOKED``)
    or PERMISSION_DENIED (``WRONG_TABLE``, ``NOT_A_PLAYER``, ``NOT_TABLE_CREATOR``).

    The identity token of a create or join (UNAUTHENTICATED): ``IDENTITY_REQUIRED`` (the server
    admits signed-in players only, and the call carried none), ``IDENTITY_INVALID`` (a bad
    signature, issuer, audience, or claims) and ``IDENTITY_EXPIRED`` (sign in again, or refresh
    the token, and retry with the new one).
    """


class SeatTakenError(HeartsError):
    """The asked-for seat is held by someone else (ALREADY_EXISTS, ``SEAT_TAKEN``).

    ``ALREADY_SEATED``: the joining player (by their identity token) holds another seat of the
    table already; join without naming a seat to get a new token for that one.
    """


class ConflictError(HeartsError):
    """The table changed under the call (ABORTED): a stale etag, or too much contention.

    Read the table again and decide again. The client itself retries ``CONFLICT`` (the call
    carried no etag, and its request_id keeps the retry safe) but never ``ETAG_MISMATCH``.
    """


class UnavailableError(HeartsError):
    """The service cannot answer now: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED with a
    reason (``OVERLOADED``, ``TOO_MANY_STREAMS``), or CANCELLED by the server (how its gRPC layer
    refuses calls when overloaded). A bare RESOURCE_EXHAUSTED, a message over gRPC's size limit,
    is an :class:`InvalidRequestError`, and ``TOO_MANY_REACTIONS``, ``TOO_MANY_TABLES`` and
    ``TOO_MANY_STREAMS_FROM_ADDRESS`` (the caller's own limits) a plain :class:`HeartsError`.
    ``IDENTITY_UNAVAILABLE``: the server cannot fetch the identity provider's keys to check an
    identity token.

    Raised once the client's own retries are used up; trying later is safe.
    """


# RESOURCE_EXHAUSTED reasons that say the caller did too much (not that the service is busy).
_NOT_NOW = frozenset({"TOO_MANY_REACTIONS", "TOO_MANY_TABLES", "TOO_MANY_STREAMS_FROM_ADDRESS"})

_CLASSES: dict[Any, type[HeartsError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidRequestError,
    grpc.StatusCode.OUT_OF_RANGE: InvalidRequestError,
    grpc.StatusCode.FAILED_PRECONDITION: IllegalMoveError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.UNAUTHENTICATED: AuthError,
    grpc.StatusCode.PERMISSION_DENIED: AuthError,
    grpc.StatusCode.ALREADY_EXISTS: SeatTakenError,
    grpc.StatusCode.ABORTED: ConflictError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: UnavailableError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: UnavailableError,
    grpc.StatusCode.CANCELLED: UnavailableError,
}


def error_from_rpc(error: grpc.RpcError) -> HeartsError:
    """The :class:`HeartsError` for a failed call, read from its status and trailers."""
    code = error.code()
    message = str(error.details() or "")
    reason = ""
    legal_cards: tuple[pb.Card, ...] = ()
    cards_to_pass = 0
    metadata: dict[str, str] = {}
    for key, value in error.trailing_metadata() or ():
        if key != _DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if not reason or info.domain == ERROR_DOMAIN:
                    reason = info.reason
                    metadata = dict(info.metadata)
            elif detail.Is(hearts_errors_pb.MoveRejection.DESCRIPTOR):
                rejection = hearts_errors_pb.MoveRejection()
                detail.Unpack(rejection)
                reason = reason or rejection.reason
                legal_cards = tuple(rejection.legal_cards)
                cards_to_pass = rejection.cards_to_pass
    name = getattr(code, "name", str(code))
    cls = _CLASSES.get(code, HeartsError)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and not reason:
        # Not the server shedding load (that names a reason) but gRPC refusing a message over
        # its size limit, which the same call would meet again.
        cls = InvalidRequestError
    elif reason in _NOT_NOW:
        cls = HeartsError  # a limit of the caller's own, not the service's: not retried
    return cls(
        code,
        reason or name,
        message,
        legal_cards=legal_cards,
        cards_to_pass=cards_to_pass,
        metadata=metadata,
    )
