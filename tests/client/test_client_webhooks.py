"""The client's webhook check against what a real server posts, and against forgeries."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, WebhookError, verify_webhook
from hearts_server.webhooks import signature

from ..webhook_receiver import Receiver
from .client_helpers import start_server

SECRET = "the-webhook-secret-of-this-app-0123456789"


async def test_a_real_webhook_checks_out_and_a_tampered_one_does_not() -> None:
    receiver = Receiver()
    server = await start_server(webhook_url=receiver.url, webhook_secret=SECRET)
    try:
        async with HeartsClient(server.address) as client:
            bots = {1: "heuristic", 2: "heuristic", 3: "heuristic"}
            created = await client.create_table("t", bots=bots, rules={"target_score": 1})
            await client.join_table(created.name, "Ann", seat=0)
            for _ in range(500):  # play the one human seat until the game is over
                view = await client.get_table(created.name)
                if view.table.phase == pb.PHASE_GAME_OVER:
                    break
                if view.legal_cards:
                    if view.table.phase == pb.PHASE_PASSING:
                        await client.pass_cards(created.name, list(view.legal_cards)[:3])
                    else:
                        await client.play_card(created.name, view.legal_cards[0])
            for _ in range(500):
                if receiver.posts:
                    break
                await asyncio.sleep(0.02)
    finally:
        await server.stop(0)
        receiver.close()
    headers, body = receiver.posts[0]
    event = verify_webhook(SECRET, headers["hearts-signature"], body)
    assert event["type"] == "game.over"
    assert event["table"] == created.name
    assert event["seats"][0]["player_display_name"] == "Ann"
    for forged_body, secret in [
        (body.replace(b'"Ann"', b'"Eve"'), SECRET),
        (body, "another-secret-of-the-same-sort-0123456789"),
    ]:
        with pytest.raises(WebhookError, match="signature"):
            verify_webhook(secret, headers["hearts-signature"], forged_body)


def test_an_old_post_or_a_broken_header_is_refused() -> None:
    body = json.dumps({"id": "x", "type": "game.over"}).encode()
    sent = int(time.time()) - 3600
    header = signature(SECRET.encode(), sent, body)
    with pytest.raises(WebhookError, match="too old"):
        verify_webhook(SECRET, header, body)
    assert verify_webhook(SECRET, header, body, now=sent + 10)["id"] == "x"
    for broken in ("", "t=abc,v1=00", "v1=00", "t=1", "nonsense"):
        with pytest.raises(WebhookError, match="not a Hearts-Signature"):
            verify_webhook(SECRET, broken, body)
    with pytest.raises(WebhookError, match="signature"):  # not hex, not even ASCII
        verify_webhook(SECRET, f"t={sent},v1=é\udcff", body, now=sent)
    not_an_object = b"[1]"
    with pytest.raises(WebhookError, match="not a JSON object"):
        verify_webhook(
            SECRET, signature(SECRET.encode(), sent, not_an_object), not_an_object, now=sent
        )
