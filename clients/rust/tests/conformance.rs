//! Plays Hearts against a live hearts-server through this crate, exactly as a Rust program would:
//! the generated tonic client, the seat token as `authorization` metadata, the error details read
//! with `StatusDetails`. It checks what a client relies on: the watch stream tells the whole game
//! in order and shows the seat no other seat's cards (and its own presence, connected, never a
//! bot's), a refused move says why (and which cards are
//! legal), a forged token is refused, SuggestMove's moves are legal and play a game out,
//! RematchTable seats the player again, four players who QuickJoin at once are seated together
//! and play their game out, and a signed-in player (an identity token) finds its tables with
//! ListPlayerTables and its seat again on a new device. Between them the tests meet every reason
//! for refusing a move that docs/api.md lists, each at least once: the whole game those it can
//! provoke at will, `every_other_rule_refusal_is_met` those that need a second player or a certain
//! deal.
//!
//! The tests need a server at HEARTS_SERVER (host:port) and are skipped without one (they fail
//! instead when HEARTS_CONFORMANCE_REQUIRED is set, as clients/rust/ci.sh does);
//! scripts/with-server.sh starts a server and sets it. They never choose a card the caller's own
//! view does not offer, except where a test means to break a rule. The signed-in player's test
//! also needs HEARTS_IDENTITY_SECRET, the secret the server checks identity tokens with (set by
//! scripts/with-server.sh too), and is skipped (or fails, likewise) without it.
//!
//! Every game is reproducible: HEARTS_CONFORMANCE_SEED (default: the clock) is the deck seed,
//! which also seeds the server's bots, and the seed of the test's own card choices. Failures
//! print it (QuickJoin takes no deck seed: there the seed replays the test's choices, not the
//! deal). Every call, every wait and each whole test is bounded by a timeout.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hearts_client::tonic::{Code, Response, Status, transport::Channel};
use hearts_client::v1::{
    BotLevel, Card, CardPlayedEvent, CreateTableRequest, DeleteTableRequest, GameOverEvent,
    GetTableRequest, JoinTableRequest, LeaveTableRequest, ListPlayerTablesRequest,
    PassCardsRequest, Phase, PlayCardRequest, PlayedCard, PlayerTable, PresenceChangedEvent,
    QuickJoinRequest, QuickJoinResponse, Rank, Reaction, ReactionEvent, RematchTableRequest,
    RoundScore, Rules, Seat, SeatOccupant, SuggestMoveRequest, Suit, Table, TableEvent, TableView,
    Trick, WatchTableRequest, WatchTableResponse, table_event::Event, watch_table_response::Kind,
};
use hearts_client::{BearerToken, StatusDetails, TableServiceClient};
use hmac::{Hmac, KeyInit, Mac};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

type Client = TableServiceClient<Channel>;

/// Keeps a game to a few rounds.
const TARGET_SCORE: i32 = 20;
/// The quick game's target score: a few rounds, and asked for by no other test, so that QuickJoin
/// seats only that test's four players at its table.
const QUICK_TARGET_SCORE: i32 = 22;
/// The quick game's turn timeout: far longer than the game takes.
const QUICK_TURN_TIMEOUT_SECONDS: i64 = 90;
/// The seat the tests join; the others are heuristic bots, but for one table with a second player.
const HUMAN_SEAT: i32 = 0;
/// Bounds each test; a whole game with inline bots takes well under a second.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Bounds each call, and each wait for the watch stream.
const WAIT: Duration = Duration::from_secs(10);

/// The refusals (method/reason) the whole-game test must meet: each one is provoked on purpose.
/// MUST_FOLLOW_SUIT needs the seat to follow a trick while holding the led suit and another,
/// which every game brings about.
const REQUIRED_REFUSALS: [&str; 14] = [
    "PassCards/WRONG_PASS_COUNT",
    "PassCards/DUPLICATE_CARD",
    "PassCards/CARD_NOT_IN_HAND",
    "PassCards/ETAG_MISMATCH",
    "PassCards/NOT_A_PLAYER",
    "PassCards/TOKEN_MISSING",
    "PassCards/WRONG_PHASE",
    "PassCards/GAME_OVER",
    "PlayCard/WRONG_PHASE",
    "PlayCard/CARD_NOT_IN_HAND",
    "PlayCard/MUST_FOLLOW_SUIT",
    "PlayCard/INVALID_CARD",
    "PlayCard/ETAG_MISMATCH",
    "PlayCard/GAME_OVER",
];

/// Refusals that depend on the deal (who holds the two of clubs, whether the seat leads before
/// hearts are broken while holding hearts and more, whether it is void in clubs on the first
/// trick) or on the rules (MUST_LEAD_CLUB needs can_lead_any_club): the whole-game test checks
/// those its game offers, and `every_other_rule_refusal_is_met` plays one-round games until it
/// has met each.
const CHANCE_REFUSALS: [&str; 4] = [
    "PlayCard/MUST_LEAD_TWO_OF_CLUBS",
    "PlayCard/MUST_LEAD_CLUB",
    "PlayCard/HEARTS_NOT_BROKEN",
    "PlayCard/NO_POINTS_ON_FIRST_TRICK",
];

/// At most this many one-round games to meet every chance refusal; a few suffice in practice
/// (each game steers its pass toward the situation still missing).
const MAX_DEALS: i64 = 200;

// ------------------------------------------------------------------------------------ the tests

/// Plays one human seat against three heuristic bots to the end, choosing only cards its own view
/// offers, and on the way provokes every kind of refused move. Checks that the watch stream
/// delivered every trick and every round's score in order, with growing sequence numbers and
/// none of another seat's cards, that it reported the seat's presence (its own stream, open) and
/// no bot's, and that the final totals and result agree everywhere.
#[tokio::test]
async fn a_whole_game_in_order_with_every_refusal() {
    let Some((client, address)) = connect().await else {
        return;
    };
    within(TEST_TIMEOUT, "the whole-game test", async move {
        let seed = game_seed();
        let mut game = Game::new(client, seed, "whole game", Rules::default(), &[]).await;
        let after = game.joined.sequence;
        let mut watch = Watcher::start(&address, &game, after).await;

        let mut rng = Rng::new(seed as u64);
        let mut refusals = BTreeSet::new();
        let mut view = game.joined.clone();
        let mut moves = 0;
        while phase(&view) != Phase::GameOver {
            check_view(&game, &view);
            if view.cards_to_pass > 0 {
                if !refusals.contains("PassCards/WRONG_PASS_COUNT") {
                    refuse_passes(&mut game, &view, &mut refusals).await;
                }
            } else if !view.legal_cards.is_empty() {
                refuse_plays(&mut game, &view, &mut refusals).await;
            }
            view = game.make_move(&view, &mut rng).await;
            moves += 1;
        }
        check_view(&game, &view);
        println!(
            "seed {seed}: game over after {} rounds and {moves} moves of seat {HUMAN_SEAT}",
            table(&view).round_number
        );

        // A finished game refuses every move, with GAME_OVER.
        refuse_after_game_over(&mut game, &view, &mut refusals).await;

        // The game_over event may still be in flight when the last move's response arrives.
        watch.wait_for(|event| matches!(event, Event::GameOver(_))).await;
        let final_view = game.view().await;
        check_view(&game, &final_view);

        // Deleting the table must end the stream, after a TableDeletedEvent.
        game.delete().await;
        let messages = watch.finish().await.unwrap_or_else(|status| {
            panic!(
                "seed {seed}: the watch stream ended with {}, want a clean end after table_deleted",
                describe(&status)
            )
        });
        check_stream(&game, after, &messages, &final_view);

        let missing: Vec<_> =
            REQUIRED_REFUSALS.iter().filter(|key| !refusals.contains(**key)).collect();
        assert!(
            missing.is_empty(),
            "seed {seed}: the game ended before these refusals could be provoked: {missing:?}"
        );
        let met: Vec<_> = CHANCE_REFUSALS.iter().filter(|key| refusals.contains(**key)).collect();
        println!(
            "seed {seed}: {} refusals checked; of those that depend on the deal: {met:?}",
            refusals.len()
        );
    })
    .await;
}

/// Plays a legal card on the seat's turn with tokens the server never issued, and expects
/// UNAUTHENTICATED / TOKEN_INVALID and an unchanged table.
#[tokio::test]
async fn a_forged_token_is_unauthenticated() {
    let Some((client, _)) = connect().await else {
        return;
    };
    within(TEST_TIMEOUT, "the forged-token test", async move {
        let seed = game_seed();
        let mut game = Game::new(client, seed, "forged token", Rules::default(), &[]).await;
        let mut rng = Rng::new(seed as u64 ^ 2);
        let mut view = game.joined.clone();
        while view.legal_cards.is_empty() || view.cards_to_pass > 0 {
            view = game.make_move(&view, &mut rng).await;
        }
        let card = view.legal_cards[0];

        let forgeries = [
            ("the real claims with another signature", tamper_signature(&game.seat_token)),
            ("not a token at all", "not-a-token".to_owned()),
        ];
        for (what, forged) in forgeries {
            let token = BearerToken::new(&forged).expect("a forged token is ASCII");
            let request = play_request(&game.name, card, "");
            let result = game.client.play_card(token.request(request)).await;
            let status = refused(&game, &format!("PlayCard {card} with {what}"), result);
            check_refusal(&game, what, &status, Code::Unauthenticated, "TOKEN_INVALID");
        }
        assert_unchanged(&mut game, &view, "plays with forged tokens").await;
        game.delete().await;
    })
    .await;
}

/// Plays the seat's every move on SuggestMove's word (each suggestion legal, on the view's etag),
/// expects GAME_OVER from it once the game is over, and then a rematch: RematchTable seats the
/// player at the same seat of a new table, the two tables naming each other.
#[tokio::test]
async fn suggested_moves_play_a_whole_game_then_a_rematch_seats_the_player_again() {
    let Some((client, _)) = connect().await else {
        return;
    };
    within(TEST_TIMEOUT, "the suggestion and rematch test", async move {
        let seed = game_seed();
        let mut game = Game::new(client, seed, "suggestions", Rules::default(), &[]).await;
        let seat = game.seat.clone();
        let early =
            game.client
                .rematch_table(seat.request(RematchTableRequest {
                    name: game.name.clone(),
                    request_id: request_id(),
                }))
                .await;
        let status = refused(&game, "RematchTable in play", early);
        check_refusal(
            &game,
            "RematchTable in play",
            &status,
            Code::FailedPrecondition,
            "GAME_NOT_OVER",
        );

        let mut view = game.joined.clone();
        let mut moves = 0;
        while phase(&view) != Phase::GameOver {
            moves += 1;
            assert!(moves <= 2000, "seed {seed}: no game over after 2000 moves");
            if view.legal_cards.is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
                view = game.get_view(&seat).await;
                continue;
            }
            let request = SuggestMoveRequest { name: game.name.clone() };
            let hint = game
                .client
                .suggest_move(seat.request(request))
                .await
                .unwrap_or_else(|s| panic!("seed {seed}: SuggestMove: {}", describe(&s)))
                .into_inner();
            let want = if view.cards_to_pass > 0 { view.cards_to_pass as usize } else { 1 };
            assert!(
                hint.etag == etag(&view) && hint.cards.len() == want,
                "seed {seed}: SuggestMove gave {} at etag {:?}; want {want} cards at {:?}",
                notations(&hint.cards),
                hint.etag,
                etag(&view)
            );
            assert!(
                hint.cards.iter().all(|card| view.legal_cards.contains(card)),
                "seed {seed}: SuggestMove gave {}, not among {}",
                notations(&hint.cards),
                notations(&view.legal_cards)
            );
            view = if want == 1 {
                game.play(&seat, &view, hint.cards[0]).await
            } else {
                game.pass(&seat, &view, hint.cards).await
            };
        }
        let over = game
            .client
            .suggest_move(seat.request(SuggestMoveRequest { name: game.name.clone() }))
            .await;
        let status = refused(&game, "SuggestMove after the game", over);
        check_refusal(
            &game,
            "SuggestMove after the game",
            &status,
            Code::FailedPrecondition,
            "GAME_OVER",
        );

        let rematch =
            game.client
                .rematch_table(seat.request(RematchTableRequest {
                    name: game.name.clone(),
                    request_id: request_id(),
                }))
                .await
                .unwrap_or_else(|s| {
                    panic!("seed {seed}: RematchTable after the game: {}", describe(&s))
                })
                .into_inner();
        let next_view = rematch.view.expect("RematchTable answered no view");
        let next = table(&next_view).clone();
        println!("seed {seed}: {moves} suggested moves; rematch of {} at {}", game.name, next.name);
        assert_eq!(rematch.seat, HUMAN_SEAT, "seed {seed}: RematchTable's seat");
        assert!(
            !rematch.seat_token.is_empty() && rematch.seat_token != game.seat_token,
            "seed {seed}: RematchTable gave no new seat token"
        );
        assert!(
            next.name != game.name && next.name.starts_with("tables/"),
            "seed {seed}: {next:?}"
        );
        assert_eq!(next.rematch_of, game.name, "seed {seed}: the new table's rematch_of");
        let finished = game.view().await;
        assert_eq!(table(&finished).rematch_table, next.name, "seed {seed}: rematch_table");
        game.delete().await;
    })
    .await;
}

/// Four players QuickJoin at once, asking for the same game: they get one table and four seats,
/// the fourth join starts the game with the rules and turn timeout asked for, and a retry (same
/// request_id) gets the first call's seat though the game has started since. Then the four play
/// the game out.
#[tokio::test]
async fn four_quick_joins_share_one_table_and_play_it_out() {
    let Some((client, _)) = connect().await else {
        return;
    };
    within(TEST_TIMEOUT, "the quick-join test", async move {
        let seed = game_seed();
        let rules = Rules {
            target_score: Some(QUICK_TARGET_SCORE),
            queen_breaks_hearts: Some(true),
            ..Rules::default()
        };
        let turn_timeout =
            hearts_client::prost_types::Duration { seconds: QUICK_TURN_TIMEOUT_SECONDS, nanos: 0 };
        let requests: Vec<QuickJoinRequest> = (1..=4)
            .map(|player| QuickJoinRequest {
                rules: Some(rules),
                turn_timeout: Some(turn_timeout),
                player_display_name: format!("rust quick {player}"),
                request_id: request_id(),
                ..QuickJoinRequest::default()
            })
            .collect();

        // Four players press "play now" at the same moment.
        let calls: Vec<_> = requests
            .iter()
            .map(|request| {
                let (mut client, request) = (client.clone(), request.clone());
                tokio::spawn(async move { client.quick_join(request).await })
            })
            .collect();
        let mut joined = Vec::new();
        for (request, call) in requests.iter().zip(calls) {
            let response = call.await.expect("the QuickJoin task panicked").unwrap_or_else(|s| {
                panic!(
                    "seed {seed}: QuickJoin as {}: {}",
                    request.player_display_name,
                    describe(&s)
                )
            });
            joined.push(response.into_inner());
        }
        let name = quick_table(&joined[0]).name.clone();
        let places: Vec<_> =
            joined.iter().map(|response| (&quick_table(response).name, response.seat)).collect();
        println!("seed {seed}: quick joins seated at {places:?}");
        assert!(
            name.starts_with("tables/") && places.iter().all(|(table, _)| **table == name),
            "seed {seed}: four QuickJoins for one game got the tables {places:?}, want one"
        );
        let mut seats: Vec<i32> = joined.iter().map(|response| response.seat).collect();
        seats.sort();
        assert_eq!(seats, [0, 1, 2, 3], "seed {seed}: the quick joins' seats, {places:?}");
        for response in &joined {
            let view = response.view.as_ref().expect("QuickJoin answered no view");
            assert!(
                !response.seat_token.is_empty()
                    && view.viewer_seat == Some(response.seat)
                    && response.etag == etag(view),
                "seed {seed}: QuickJoin gave seat {}, viewer seat {:?}, a token of {} bytes, \
                 etag {:?} for the view's {:?}",
                response.seat,
                view.viewer_seat,
                response.seat_token.len(),
                response.etag,
                etag(view)
            );
        }

        // The fourth join started the game, with the rules and the turn timeout asked for.
        let mut by_seat = joined.clone();
        by_seat.sort_by_key(|response| response.seat);
        let mut game = Game::quick(client, seed, &by_seat);
        let started = game.view().await;
        let at_start = table(&started);
        assert!(
            phase(&started) == Phase::Passing && started.cards_to_pass == 3,
            "seed {seed}: after the fourth quick join the phase is {:?} with {} cards to pass",
            phase(&started),
            started.cards_to_pass
        );
        let got = at_start.rules.unwrap_or_default();
        assert_eq!(
            (got.target_score, got.queen_breaks_hearts),
            (rules.target_score, rules.queen_breaks_hearts),
            "seed {seed}: the quick game's rules"
        );
        assert_eq!(
            at_start.turn_timeout,
            Some(turn_timeout),
            "seed {seed}: the quick game's turn_timeout"
        );
        for (request, response) in requests.iter().zip(&joined) {
            let seat = at_start.seats.iter().find(|seat| seat.seat == response.seat);
            assert!(
                seat.is_some_and(|seat| seat.occupant() == SeatOccupant::Human
                    && seat.player_display_name == request.player_display_name),
                "seed {seed}: seat {} holds {seat:?}, want {}",
                response.seat,
                request.player_display_name
            );
        }

        // A retry (same request_id) gets the first call's seat, though the game has started since.
        for (request, first) in requests.iter().zip(&joined) {
            let again = game
                .client
                .quick_join(request.clone())
                .await
                .unwrap_or_else(|s| {
                    panic!(
                        "seed {seed}: QuickJoin retry as {}: {}",
                        request.player_display_name,
                        describe(&s)
                    )
                })
                .into_inner();
            assert_eq!(
                (&quick_table(&again).name, again.seat, &again.seat_token),
                (&name, first.seat, &first.seat_token),
                "seed {seed}: a retried QuickJoin of {} (table, seat, token)",
                request.player_display_name
            );
        }

        let tokens: Vec<BearerToken> = by_seat
            .iter()
            .map(|response| BearerToken::new(&response.seat_token).expect("an ASCII token"))
            .collect();
        let final_view = play_out(&mut game, &tokens, &mut Rng::new(seed as u64 ^ 3)).await;
        let over = table(&final_view);
        println!(
            "seed {seed}: quick game {name} over after {} rounds, totals {:?}",
            over.round_number, over.total_scores
        );
        let highest = over.total_scores.iter().max().copied().unwrap_or_default();
        assert!(
            highest >= QUICK_TARGET_SCORE
                && over.result.as_ref().is_some_and(|result| !result.winners.is_empty()),
            "seed {seed}: the quick game ended with totals {:?} and result {:?}",
            over.total_scores,
            over.result
        );
    })
    .await;
}

/// A signed-in player (an identity token for a subject no other test or run uses) joins two
/// tables that wait for players, one unlisted: ListPlayerTables lists exactly those two, the one
/// joined last first, with the seats the player holds. JoinTable with the identity token alone (a
/// new device) gives the same seat and a seat token that reads the seat's view; once the player
/// leaves a table (before its game starts) the table is gone from the list; and without an
/// identity token (none at all, or a seat token instead) the call is refused with
/// UNAUTHENTICATED / IDENTITY_REQUIRED.
#[tokio::test]
async fn a_signed_in_player_lists_its_tables_and_finds_its_seat_again() {
    let Some((mut client, _)) = connect().await else {
        return;
    };
    let Some(secret) = identity_secret() else {
        return;
    };
    within(TEST_TIMEOUT, "the player's tables test", async move {
        let seed = game_seed();
        let player = format!("rust-player-{}", request_id());
        let identity = sign_identity(&secret, &player);
        let (listed_seat, unlisted_seat) = (2, 1);
        let mut listed =
            Game::waiting(client.clone(), seed, "my table", false, &identity, listed_seat).await;
        let mut unlisted = Game::waiting(
            client.clone(),
            seed,
            "my unlisted table",
            true,
            &identity,
            unlisted_seat,
        )
        .await;
        println!(
            "seed {seed}: {player} at {} seat {listed_seat}, {} (unlisted) seat {unlisted_seat}",
            listed.name, unlisted.name
        );

        // Both tables, the unlisted one too, the one joined last first, each with the seat held.
        let mine = my_tables(&mut client, seed, &identity).await;
        assert_eq!(
            places(&mine),
            [(unlisted.name.clone(), unlisted_seat), (listed.name.clone(), listed_seat)],
            "seed {seed}: ListPlayerTables after joining two tables (table, seat)"
        );
        for entry in &mine {
            let listed_table = entry.table.as_ref().expect("a PlayerTable holds its table");
            let holder = listed_table.seats.iter().find(|seat| seat.seat == entry.seat);
            assert!(
                holder.is_some_and(
                    |seat| seat.occupant() == SeatOccupant::Human && seat.player_id == player
                ),
                "seed {seed}: {} seat {} holds {holder:?}, want {player}",
                listed_table.name,
                entry.seat
            );
        }
        assert!(
            mine[0].table.as_ref().is_some_and(|table| table.unlisted),
            "seed {seed}: the first table listed is not marked unlisted"
        );

        // A new device: the identity token alone finds the seat again and gets a token for it.
        let again = client
            .join_table(JoinTableRequest {
                name: listed.name.clone(),
                player_display_name: "rust conformance".to_owned(),
                request_id: request_id(),
                identity_token: identity.clone(),
                ..JoinTableRequest::default()
            })
            .await
            .unwrap_or_else(|s| {
                panic!("seed {seed}: JoinTable with the identity token only: {}", describe(&s))
            })
            .into_inner();
        assert!(
            again.seat == listed_seat && !again.seat_token.is_empty(),
            "seed {seed}: joining again gave seat {} and a token of {} bytes; want {listed_seat}",
            again.seat,
            again.seat_token.len()
        );
        let token = BearerToken::new(&again.seat_token).expect("an ASCII token");
        let view = listed.get_view(&token).await;
        let held: Vec<i32> = table(&view)
            .seats
            .iter()
            .filter(|seat| seat.player_id == player)
            .map(|seat| seat.seat)
            .collect();
        assert_eq!(
            (view.viewer_seat, held),
            (Some(listed_seat), vec![listed_seat]),
            "seed {seed}: the new token's viewer seat, and the seats the player holds"
        );

        // The seat given up (the game has not started): the table leaves the list.
        let request = LeaveTableRequest {
            name: listed.name.clone(),
            etag: String::new(),
            request_id: request_id(),
        };
        if let Err(s) = client.leave_table(token.request(request)).await {
            panic!("seed {seed}: LeaveTable {} with the new token: {}", listed.name, describe(&s));
        }
        let mine = my_tables(&mut client, seed, &identity).await;
        assert_eq!(
            places(&mine),
            [(unlisted.name.clone(), unlisted_seat)],
            "seed {seed}: ListPlayerTables after leaving {}",
            listed.name
        );

        // Only an identity token names a player; a seat token names one seat of one table.
        let seat = unlisted.seat.clone();
        for (what, token) in [("no token at all", None), ("a seat token instead", Some(&seat))] {
            let what = format!("ListPlayerTables with {what}");
            let request = authorize(token, ListPlayerTablesRequest::default());
            let result = client.list_player_tables(request).await;
            let status = refused(&unlisted, &what, result);
            check_refusal(&unlisted, &what, &status, Code::Unauthenticated, "IDENTITY_REQUIRED");
        }
        listed.delete().await;
        unlisted.delete().await;
    })
    .await;
}

/// Meets the refusals of the rules that the whole-game test cannot provoke at will:
/// ALREADY_PASSED and NOT_YOUR_TURN need a second human at the table (bots move at once), and the
/// chance refusals a deal that puts the seat in their situation.
#[tokio::test]
async fn every_other_rule_refusal_is_met() {
    let Some((client, _)) = connect().await else {
        return;
    };
    within(TEST_TIMEOUT, "the other-refusals test", async move {
        let seed = game_seed();
        let mut seen = BTreeSet::new();
        second_player_refusals(client.clone(), seed, &mut seen).await;
        let mut deals = 0;
        while let Some(missing) = CHANCE_REFUSALS.iter().find(|key| !seen.contains(**key)) {
            assert!(deals < MAX_DEALS, "seed {seed}: {missing} was not met in {deals} deals");
            deals += 1;
            deal_refusals(client.clone(), seed.wrapping_add(deals), &mut seen).await;
        }
        println!("seed {seed}: {} refusals checked, in {deals} one-round games", seen.len());
    })
    .await;
}

// ------------------------------------------------------------------------------------ refusals

/// While the seat owes its pass: a pass of two cards, one naming a card twice, one with a card the
/// seat does not hold, a play, and a good pass with a stale etag, the creator's token or no token.
async fn refuse_passes(game: &mut Game, view: &TableView, seen: &mut BTreeSet<String>) {
    let legal = &view.legal_cards;
    let (a, b, c) = (legal[0], legal[1], legal[2]);
    let missing = not_in_hand(view);
    let seat = game.seat.clone();
    let creator = game.creator.clone().expect("the test created the table");
    let etag = etag(view);

    // Passes the rules refuse.
    let bad_passes = [
        (vec![a, b], "WRONG_PASS_COUNT"),
        (vec![a, a, b], "DUPLICATE_CARD"),
        (vec![a, b, missing], "CARD_NOT_IN_HAND"),
    ];
    for (cards, reason) in bad_passes {
        let what = format!("PassCards {} from {}", notations(&cards), notations(&view.hand));
        let request = pass_request(&game.name, cards, &etag);
        let result = game.client.pass_cards(seat.request(request)).await;
        let status = refused(game, &what, result);
        check_move_refusal(game, &what, &status, reason, view);
        seen.insert(format!("PassCards/{reason}"));
    }

    // A good pass in a request the server refuses before the rules look at it.
    let good = vec![a, b, c];
    let bad_requests = [
        ("a stale etag", Some(&seat), &game.stale_etag, Code::Aborted, "ETAG_MISMATCH"),
        ("the creator token", Some(&creator), &etag, Code::PermissionDenied, "NOT_A_PLAYER"),
        ("no token", None, &etag, Code::Unauthenticated, "TOKEN_MISSING"),
    ];
    for (what, token, etag, code, reason) in bad_requests {
        let what = format!("PassCards {} with {what}", notations(&good));
        let request = pass_request(&game.name, good.clone(), etag);
        let result = game.client.pass_cards(authorize(token, request)).await;
        let status = refused(game, &what, result);
        check_refusal(game, &what, &status, code, reason);
        seen.insert(format!("PassCards/{reason}"));
    }

    // A play while passing.
    let what = format!("PlayCard {a} while passing");
    let result = game.client.play_card(seat.request(play_request(&game.name, a, &etag))).await;
    let status = refused(game, &what, result);
    check_move_refusal(game, &what, &status, "WRONG_PHASE", view);
    seen.insert("PlayCard/WRONG_PHASE".to_owned());

    assert_unchanged(game, view, "refused passes").await;
}

/// On the seat's turn: each illegal card of its hand whose reason was not met yet (the reason is
/// predicted from the view, as the rules name the first clause a card breaks), a card it does not
/// hold, a card that names no card, a pass, and a legal card with a stale etag.
async fn refuse_plays(game: &mut Game, view: &TableView, seen: &mut BTreeSet<String>) {
    let seat = game.seat.clone();
    let etag = etag(view);
    let mut refused_any = false;

    let mut tries: Vec<(Card, &str)> = view
        .hand
        .iter()
        .filter(|card| !view.legal_cards.contains(card))
        .map(|card| (*card, illegal_play_reason(view, *card)))
        .collect();
    tries.push((not_in_hand(view), "CARD_NOT_IN_HAND"));
    for (card, reason) in tries {
        let key = format!("PlayCard/{reason}");
        if seen.contains(&key) {
            continue;
        }
        let what = format!(
            "PlayCard {card} holding {} with legal {}, trick so far {}",
            notations(&view.hand),
            notations(&view.legal_cards),
            played_notations(current_trick_cards(view)),
        );
        let result =
            game.client.play_card(seat.request(play_request(&game.name, card, &etag))).await;
        let status = refused(game, &what, result);
        check_move_refusal(game, &what, &status, reason, view);
        seen.insert(key);
        refused_any = true;
    }

    if !seen.contains("PlayCard/INVALID_CARD") {
        let what = "PlayCard of a card with no suit and rank";
        let result = game
            .client
            .play_card(seat.request(play_request(&game.name, Card::default(), &etag)))
            .await;
        let status = refused(game, what, result);
        check_refusal(game, what, &status, Code::InvalidArgument, "INVALID_CARD");
        seen.insert("PlayCard/INVALID_CARD".to_owned());
        refused_any = true;
    }
    if !seen.contains("PassCards/WRONG_PHASE") && view.hand.len() >= 3 {
        let cards = view.hand[..3].to_vec();
        let what = format!("PassCards {} while playing", notations(&cards));
        let request = pass_request(&game.name, cards, &etag);
        let result = game.client.pass_cards(seat.request(request)).await;
        let status = refused(game, &what, result);
        check_move_refusal(game, &what, &status, "WRONG_PHASE", view);
        seen.insert("PassCards/WRONG_PHASE".to_owned());
        refused_any = true;
    }
    if !seen.contains("PlayCard/ETAG_MISMATCH") {
        let card = view.legal_cards[0];
        let what = format!("PlayCard {card} with a stale etag");
        let request = play_request(&game.name, card, &game.stale_etag);
        let result = game.client.play_card(seat.request(request)).await;
        let status = refused(game, &what, result);
        check_refusal(game, &what, &status, Code::Aborted, "ETAG_MISMATCH");
        seen.insert("PlayCard/ETAG_MISMATCH".to_owned());
        refused_any = true;
    }
    if refused_any {
        assert_unchanged(game, view, "refused plays").await;
    }
}

async fn refuse_after_game_over(game: &mut Game, view: &TableView, seen: &mut BTreeSet<String>) {
    let seat = game.seat.clone();
    let two_of_clubs = Card::new(Rank::Two, Suit::Clubs);
    let what = format!("PlayCard {two_of_clubs} after the game");
    let result =
        game.client.play_card(seat.request(play_request(&game.name, two_of_clubs, ""))).await;
    let status = refused(game, &what, result);
    check_move_refusal(game, &what, &status, "GAME_OVER", view);
    seen.insert("PlayCard/GAME_OVER".to_owned());

    let cards: Vec<Card> = ["2C", "3C", "4C"].iter().map(|c| parse(c)).collect();
    let what = format!("PassCards {} after the game", notations(&cards));
    let request = pass_request(&game.name, cards, "");
    let result = game.client.pass_cards(seat.request(request)).await;
    let status = refused(game, &what, result);
    check_move_refusal(game, &what, &status, "GAME_OVER", view);
    seen.insert("PassCards/GAME_OVER".to_owned());
}

/// With a second human at the table (seat 1): a second pass of the seat while seat 1 still owes
/// its own, and a play of the human whose turn it is not.
async fn second_player_refusals(client: Client, seed: i64, seen: &mut BTreeSet<String>) {
    let mut game = Game::new(client, seed, "two players", Rules::default(), &[1]).await;
    let (seat, other) = (game.seat.clone(), game.others[0].clone());
    let view = game.joined.clone();
    assert_eq!(view.cards_to_pass, 3, "seed {seed}: the first round passes");
    let passed = game.pass(&seat, &view, view.legal_cards[..3].to_vec()).await;
    assert!(
        phase(&passed) == Phase::Passing && passed.cards_to_pass == 0,
        "seed {seed}: after its pass the seat waits for seat 1's"
    );
    let again = passed.hand[..3].to_vec();
    let what = format!("PassCards {} after passing", notations(&again));
    let request = pass_request(&game.name, again, &etag(&passed));
    let result = game.client.pass_cards(seat.request(request)).await;
    let status = refused(&game, &what, result);
    check_move_refusal(&game, &what, &status, "ALREADY_PASSED", &passed);
    seen.insert("PassCards/ALREADY_PASSED".to_owned());

    // Seat 1 passes; the bots play until one of the two humans is to play.
    let other_view = game.get_view(&other).await;
    let playing = game.pass(&other, &other_view, other_view.legal_cards[..3].to_vec()).await;
    let turn = table(&playing).turn_seat.expect("a seat's turn while playing");
    let waiting = if turn == HUMAN_SEAT { other } else { seat };
    let view = game.get_view(&waiting).await;
    assert!(
        phase(&view) == Phase::Playing && view.legal_cards.is_empty(),
        "seed {seed}: seat {:?} owes no move while seat {turn} is to play",
        view.viewer_seat
    );
    let card = view.hand[0];
    let what =
        format!("PlayCard {card} by seat {:?} while seat {turn} is to play", view.viewer_seat);
    let request = play_request(&game.name, card, &etag(&view));
    let result = game.client.play_card(waiting.request(request)).await;
    let status = refused(&game, &what, result);
    check_move_refusal(&game, &what, &status, "NOT_YOUR_TURN", &view);
    seen.insert("PlayCard/NOT_YOUR_TURN".to_owned());
    game.delete().await;
}

/// Plays a one-round game whose pass steers toward a chance refusal still missing, trying on
/// each turn every illegal card whose reason is still missing.
async fn deal_refusals(client: Client, seed: i64, seen: &mut BTreeSet<String>) {
    // The first lead must be the two of clubs, or with can_lead_any_club a club: a table each.
    let any_club = seen.contains("PlayCard/MUST_LEAD_TWO_OF_CLUBS");
    let lead_reason =
        if any_club { "PlayCard/MUST_LEAD_CLUB" } else { "PlayCard/MUST_LEAD_TWO_OF_CLUBS" };
    let rules =
        Rules { target_score: Some(1), can_lead_any_club: Some(any_club), ..Rules::default() };
    let mut game = Game::new(client, seed, "one deal", rules, &[]).await;
    let seat = game.seat.clone();
    let mut rng = Rng::new(seed as u64);
    let mut view = game.joined.clone();
    while phase(&view) != Phase::GameOver {
        check_view(&game, &view);
        if view.cards_to_pass > 0 {
            // Keep the two of clubs to lead the first trick with it; else pass clubs first, to
            // be void in clubs on the first trick and hold points to throw on it.
            let two_of_clubs = Card::new(Rank::Two, Suit::Clubs);
            let keep_clubs = !seen.contains(lead_reason) && view.hand.contains(&two_of_clubs);
            let mut cards = view.legal_cards.clone();
            cards.sort_by_key(|card| (card.suit() == Suit::Clubs) == keep_clubs);
            cards.truncate(3);
            view = game.pass(&seat, &view, cards).await;
            continue;
        }
        if !view.legal_cards.is_empty() {
            refuse_plays(&mut game, &view, seen).await;
        }
        view = game.make_move(&view, &mut rng).await;
    }
    game.delete().await;
}

/// The reason the server must give for playing `card`, which the seat holds but may not play now:
/// the first clause of the rules it breaks (the tests' tables differ from the default rules at
/// most in can_lead_any_club).
fn illegal_play_reason(view: &TableView, card: Card) -> &'static str {
    let trick = current_trick_cards(view);
    if let Some(led) = trick.first().and_then(|played| played.card) {
        if view.hand.iter().any(|c| c.suit == led.suit) {
            return "MUST_FOLLOW_SUIT";
        }
        return "NO_POINTS_ON_FIRST_TRICK";
    }
    if view.completed_tricks.is_empty() {
        let rules = table(view).rules.unwrap_or_default();
        return if rules.can_lead_any_club() { "MUST_LEAD_CLUB" } else { "MUST_LEAD_TWO_OF_CLUBS" };
    }
    assert_eq!(card.suit(), Suit::Hearts, "{card} is refused on an empty trick after the first");
    "HEARTS_NOT_BROKEN"
}

/// Unwraps the error of a call that must fail.
fn refused<T>(game: &Game, what: &str, result: Result<Response<T>, Status>) -> Status {
    match result {
        Ok(_) => panic!("seed {}: {what} succeeded; it must be refused", game.seed),
        Err(status) => status,
    }
}

/// Checks a refused call's code and its ErrorInfo (domain hearts.v1, the reason).
fn check_refusal(game: &Game, what: &str, status: &Status, code: Code, reason: &str) {
    let seed = game.seed;
    let info = status.error_info().unwrap_or_else(|| {
        panic!("seed {seed}: {what}: {} carries no google.rpc.ErrorInfo", describe(status))
    });
    assert_eq!(
        (status.code(), info.domain.as_str(), info.reason.as_str()),
        (code, "hearts.v1", reason),
        "seed {seed}: {what}: got {}",
        describe(status)
    );
    assert_eq!(status.reason().as_deref(), Some(reason));
}

/// Checks a move refused by the rules: FAILED_PRECONDITION with the reason, the table's name in
/// the ErrorInfo, and a MoveRejection that repeats the reason and the view's legal cards.
fn check_move_refusal(game: &Game, what: &str, status: &Status, reason: &str, view: &TableView) {
    let seed = game.seed;
    check_refusal(game, what, status, Code::FailedPrecondition, reason);
    let info = status.error_info().expect("checked above");
    assert_eq!(
        info.metadata.get("table"),
        Some(&game.name),
        "seed {seed}: {what}: ErrorInfo metadata {:?}",
        info.metadata
    );
    let rejection = status.move_rejection().unwrap_or_else(|| {
        panic!("seed {seed}: {what}: {} carries no hearts.v1.MoveRejection", describe(status))
    });
    assert_eq!(rejection.reason, reason, "seed {seed}: {what}: MoveRejection");
    assert_eq!(
        notations(&rejection.legal_cards),
        notations(&view.legal_cards),
        "seed {seed}: {what}: MoveRejection legal_cards, want the view's"
    );
    assert_eq!(
        rejection.cards_to_pass, view.cards_to_pass,
        "seed {seed}: {what}: MoveRejection cards_to_pass, want the view's"
    );
}

/// A refused call changes nothing: the table's etag and event sequence are those of the view.
async fn assert_unchanged(game: &mut Game, view: &TableView, what: &str) {
    let now = game.view().await;
    assert_eq!(
        (etag(&now), now.sequence),
        (etag(view), view.sequence),
        "seed {}: {what} changed the table",
        game.seed
    );
}

// ------------------------------------------------------------------------------------ the game

/// A table a test created (or QuickJoin found), and the seat it joined there.
struct Game {
    client: Client,
    seed: i64,
    name: String,
    /// None for a table QuickJoin made: it has no creator.
    creator: Option<BearerToken>,
    seat: BearerToken,
    seat_token: String,
    /// The tokens of the other seats that humans joined (`Game::new`'s `others`), in order.
    others: Vec<BearerToken>,
    /// The etag of the table before the seat joined: stale ever after.
    stale_etag: String,
    /// The seat's view right after joining.
    joined: TableView,
}

impl Game {
    /// Creates a table with the deck seed and `rules` (unset: a small target score) whose seats
    /// are heuristic bots but HUMAN_SEAT and `others`. The test joins `others`, then HUMAN_SEAT,
    /// which fills the table and deals the first round.
    async fn new(mut client: Client, seed: i64, label: &str, rules: Rules, others: &[i32]) -> Game {
        let seats = (0..4)
            .filter(|seat| *seat != HUMAN_SEAT && !others.contains(seat))
            .map(|seat| Seat {
                seat,
                occupant: SeatOccupant::Bot as i32,
                bot_level: BotLevel::Heuristic as i32,
                ..Seat::default()
            })
            .collect();
        let rules = Rules { target_score: rules.target_score.or(Some(TARGET_SCORE)), ..rules };
        let request = CreateTableRequest {
            table: Some(Table {
                display_name: format!("rust conformance: {label}"),
                rules: Some(rules),
                seats,
                deck_seed: Some(seed),
                ..Table::default()
            }),
            request_id: request_id(),
            // Fields added to the API later (identity_token, ...) keep their defaults.
            ..CreateTableRequest::default()
        };
        let created = client
            .create_table(request)
            .await
            .unwrap_or_else(|s| panic!("seed {seed}: CreateTable: {}", describe(&s)))
            .into_inner();
        let created_view = created.view.expect("CreateTable answered no view");
        let name = table(&created_view).name.clone();
        assert!(
            name.starts_with("tables/") && !created.creator_token.is_empty(),
            "seed {seed}: CreateTable returned name {name:?} and a creator token of {} bytes",
            created.creator_token.len()
        );
        println!("seed {seed}: {label}: {name}");

        let mut tokens = Vec::new();
        let mut view = None;
        for seat in others.iter().chain([&HUMAN_SEAT]) {
            let joined = client
                .join_table(JoinTableRequest {
                    name: name.clone(),
                    seat: Some(*seat),
                    player_display_name: format!("rust conformance {seat}"),
                    request_id: request_id(),
                    ..JoinTableRequest::default()
                })
                .await
                .unwrap_or_else(|s| panic!("seed {seed}: JoinTable {name}: {}", describe(&s)))
                .into_inner();
            assert_eq!(joined.seat, *seat, "seed {seed}: JoinTable's seat");
            tokens.push((BearerToken::new(&joined.seat_token).expect("ASCII"), joined.seat_token));
            view = joined.view;
        }
        let view = view.expect("JoinTable answered no view");
        let (seat, seat_token) = tokens.pop().expect("HUMAN_SEAT joined");
        assert!(
            view.viewer_seat == Some(HUMAN_SEAT) && view.hand.len() == 13,
            "seed {seed}: JoinTable gave viewer seat {:?} and {} cards; want seat {HUMAN_SEAT} with 13",
            view.viewer_seat,
            view.hand.len()
        );
        assert!(
            matches!(phase(&view), Phase::Passing | Phase::Playing),
            "seed {seed}: after the fourth seat joined the phase is {:?}",
            phase(&view)
        );
        Game {
            client,
            seed,
            creator: Some(BearerToken::new(&created.creator_token).expect("an ASCII token")),
            seat,
            seat_token,
            others: tokens.into_iter().map(|(token, _)| token).collect(),
            stale_etag: table(&created_view).etag.clone(),
            joined: view,
            name,
        }
    }

    /// Creates a table without bots, listed or not, which waits for players (so that a seat there
    /// can be given up with LeaveTable), and joins `seat` there as the player of
    /// `identity_token`. Unlike `new`'s, the seat need not be HUMAN_SEAT.
    async fn waiting(
        mut client: Client,
        seed: i64,
        label: &str,
        unlisted: bool,
        identity_token: &str,
        seat: i32,
    ) -> Game {
        let request = CreateTableRequest {
            table: Some(Table {
                display_name: format!("rust conformance: {label}"),
                unlisted,
                ..Table::default()
            }),
            request_id: request_id(),
            ..CreateTableRequest::default()
        };
        let created = client
            .create_table(request)
            .await
            .unwrap_or_else(|s| panic!("seed {seed}: CreateTable: {}", describe(&s)))
            .into_inner();
        let created_view = created.view.expect("CreateTable answered no view");
        let name = table(&created_view).name.clone();
        println!("seed {seed}: {label}: {name}");
        let joined = client
            .join_table(JoinTableRequest {
                name: name.clone(),
                seat: Some(seat),
                player_display_name: "rust conformance".to_owned(),
                request_id: request_id(),
                identity_token: identity_token.to_owned(),
                ..JoinTableRequest::default()
            })
            .await
            .unwrap_or_else(|s| {
                panic!("seed {seed}: JoinTable {name} with an identity token: {}", describe(&s))
            })
            .into_inner();
        let view = joined.view.expect("JoinTable answered no view");
        assert!(
            joined.seat == seat && view.viewer_seat == Some(seat),
            "seed {seed}: JoinTable {name} gave seat {}, viewer seat {:?}; want {seat}",
            joined.seat,
            view.viewer_seat
        );
        Game {
            client,
            seed,
            creator: Some(BearerToken::new(&created.creator_token).expect("an ASCII token")),
            seat: BearerToken::new(&joined.seat_token).expect("an ASCII token"),
            seat_token: joined.seat_token,
            others: Vec::new(),
            stale_etag: table(&created_view).etag.clone(),
            joined: view,
            name,
        }
    }

    /// The game QuickJoin seated the test's four players at (`by_seat`, their responses in seat
    /// order): the seat is HUMAN_SEAT and `others` are the other three, in seat order. The etag
    /// of the first join is stale once the next player has joined.
    fn quick(client: Client, seed: i64, by_seat: &[QuickJoinResponse]) -> Game {
        let token = |response: &QuickJoinResponse| {
            BearerToken::new(&response.seat_token).expect("an ASCII token")
        };
        let human = &by_seat[HUMAN_SEAT as usize];
        Game {
            client,
            seed,
            name: quick_table(human).name.clone(),
            creator: None,
            seat: token(human),
            seat_token: human.seat_token.clone(),
            others: by_seat.iter().filter(|r| r.seat != HUMAN_SEAT).map(token).collect(),
            stale_etag: by_seat[0].etag.clone(),
            joined: human.view.clone().expect("QuickJoin answered no view"),
        }
    }

    /// Makes the seat's next move, chosen at random from what its own view offers, and returns
    /// the view after it. When the seat owes no move (it never should with inline bots, but a
    /// client may not assume that) it reads the table again instead.
    async fn make_move(&mut self, view: &TableView, rng: &mut Rng) -> TableView {
        let seat = self.seat.clone();
        self.make_move_as(&seat, view, rng).await
    }

    /// Makes the next move of the seat of `token`, whose view is `view`, as `make_move` does.
    async fn make_move_as(
        &mut self,
        token: &BearerToken,
        view: &TableView,
        rng: &mut Rng,
    ) -> TableView {
        let legal = &view.legal_cards;
        if view.cards_to_pass > 0 {
            // While passing, legal_cards are the cards the seat may pass: its hand.
            let mut chosen = legal.clone();
            rng.shuffle(&mut chosen);
            chosen.truncate(view.cards_to_pass as usize);
            self.pass(token, view, chosen).await
        } else if !legal.is_empty() {
            let card = legal[rng.below(legal.len())];
            self.play(token, view, card).await
        } else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            self.get_view(token).await
        }
    }

    /// Passes `cards` for the seat of `token`, whose view is `view`; the view after it.
    async fn pass(&mut self, token: &BearerToken, view: &TableView, cards: Vec<Card>) -> TableView {
        let what = format!("PassCards {} from {}", notations(&cards), notations(&view.hand));
        let request = pass_request(&self.name, cards, &etag(view));
        let response = self.client.pass_cards(token.request(request)).await;
        let response =
            response.unwrap_or_else(|s| panic!("seed {}: {what}: {}", self.seed, describe(&s)));
        response.into_inner().view.expect("PassCards answered no view")
    }

    /// Plays `card` for the seat of `token`, whose view is `view`; the view after it.
    async fn play(&mut self, token: &BearerToken, view: &TableView, card: Card) -> TableView {
        let what = format!("PlayCard {card} (legal {})", notations(&view.legal_cards));
        let request = play_request(&self.name, card, &etag(view));
        let response = self.client.play_card(token.request(request)).await;
        let response =
            response.unwrap_or_else(|s| panic!("seed {}: {what}: {}", self.seed, describe(&s)));
        response.into_inner().view.expect("PlayCard answered no view")
    }

    /// The seat's view.
    async fn view(&mut self) -> TableView {
        let seat = self.seat.clone();
        self.get_view(&seat).await
    }

    /// The view of the seat of `token`.
    async fn get_view(&mut self, token: &BearerToken) -> TableView {
        let request = GetTableRequest { name: self.name.clone() };
        let response = self.client.get_table(token.request(request)).await;
        let response = response.unwrap_or_else(|s| {
            panic!("seed {}: GetTable {}: {}", self.seed, self.name, describe(&s))
        });
        response.into_inner().view.expect("GetTable answered no view")
    }

    async fn delete(&mut self) {
        let creator = self.creator.clone().expect("the test created the table");
        let request = DeleteTableRequest {
            name: self.name.clone(),
            etag: String::new(),
            request_id: request_id(),
        };
        if let Err(s) = self.client.delete_table(creator.request(request)).await {
            panic!("seed {}: DeleteTable {}: {}", self.seed, self.name, describe(&s));
        }
    }
}

/// Plays a game whose four seats the test holds (`seats`: their tokens, in seat order) to the
/// end: each time the seat that owes a move (while passing, the first that has not passed; in
/// play, the seat whose turn it is) reads its view and moves as `Game::make_move` does. Returns
/// the last view.
async fn play_out(game: &mut Game, seats: &[BearerToken], rng: &mut Rng) -> TableView {
    let seed = game.seed;
    let mut view = game.view().await;
    let mut moves = 0;
    while phase(&view) != Phase::GameOver {
        moves += 1;
        assert!(moves <= 2000, "seed {seed}: no game over after 2000 moves");
        let table = table(&view);
        let mover = match phase(&view) {
            Phase::Passing => {
                table.seats.iter().find(|seat| !seat.has_passed).map(|seat| seat.seat)
            }
            Phase::Playing => table.turn_seat,
            _ => None,
        };
        let mover = mover.unwrap_or_else(|| {
            panic!(
                "seed {seed}: no seat owes a move in {:?}, turn seat {:?}",
                phase(&view),
                table.turn_seat
            )
        });
        let token = &seats[mover as usize];
        let before = game.get_view(token).await;
        view = game.make_move_as(token, &before, rng).await;
    }
    view
}

/// Checks that a view of the seat shows its own cards only: its seat, a hand of the right size, no
/// deck seed and no history before the game is over.
fn check_view(game: &Game, view: &TableView) {
    let seed = game.seed;
    let table = table(view);
    assert_eq!(view.viewer_seat, Some(HUMAN_SEAT), "seed {seed}: the view's viewer_seat");
    for (what, cards) in
        [("passed_cards", &view.passed_cards), ("received_cards", &view.received_cards)]
    {
        assert!(
            cards.is_empty() || cards.len() == 3,
            "seed {seed}: the view's {what} {}",
            notations(cards)
        );
    }
    if phase(view) == Phase::GameOver {
        assert_eq!(table.deck_seed, Some(seed), "seed {seed}: the finished game's deck_seed");
        assert_eq!(
            view.game_history.len() as i32,
            table.round_number,
            "seed {seed}: the finished game's history has a round for each round played"
        );
        return;
    }
    assert!(
        table.deck_seed.is_none() && view.game_history.is_empty(),
        "seed {seed}: a view before the game is over reveals the deck seed ({:?}) or the history ({} rounds)",
        table.deck_seed,
        view.game_history.len()
    );
    if phase(view) == Phase::Playing {
        let played_now = current_trick_cards(view).iter().any(|played| played.seat == HUMAN_SEAT);
        assert_eq!(
            view.hand.len() + view.completed_tricks.len() + usize::from(played_now),
            13,
            "seed {seed}: a hand of {} after {} tricks",
            notations(&view.hand),
            view.completed_tricks.len()
        );
        let on_table = view
            .completed_tricks
            .iter()
            .chain(view.current_trick.as_ref())
            .flat_map(|trick| trick.cards.iter().filter_map(|played| played.card));
        for card in on_table {
            assert!(
                !view.hand.contains(&card),
                "seed {seed}: {card} is in the hand and was played"
            );
        }
    }
}

// ------------------------------------------------------------------------------------ the stream

/// One WatchTable stream, read in the background.
struct Watcher {
    messages: Vec<WatchTableResponse>,
    arrived: mpsc::UnboundedReceiver<WatchTableResponse>,
    task: JoinHandle<Result<(), Status>>,
}

impl Watcher {
    /// Watches the table with the seat's token from just after sequence `after`, so that no event
    /// between the join and the watch is lost. The stream has a channel of its own, without the
    /// per-call timeout, which would end it.
    async fn start(address: &str, game: &Game, after: i64) -> Watcher {
        let channel = hearts_client::endpoint(address)
            .expect("HEARTS_SERVER is an address")
            .connect_timeout(WAIT);
        let channel = within(WAIT, "connecting for WatchTable", channel.connect())
            .await
            .unwrap_or_else(|e| panic!("connect to {address}: {e}"));
        let mut client = TableServiceClient::new(channel);
        let request = game.seat.request(WatchTableRequest {
            name: game.name.clone(),
            after_sequence: Some(after),
            ..WatchTableRequest::default()
        });
        let (sender, arrived) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut stream = client.watch_table(request).await?.into_inner();
            while let Some(message) = stream.message().await? {
                if sender.send(message).is_err() {
                    break;
                }
            }
            Ok(())
        });
        Watcher { messages: Vec::new(), arrived, task }
    }

    /// Waits until the stream has delivered an event that satisfies `want`.
    async fn wait_for(&mut self, want: impl Fn(&Event) -> bool) {
        let delivered = |message: &WatchTableResponse| match &message.kind {
            Some(Kind::Event(event)) => event.event.as_ref().is_some_and(&want),
            _ => false,
        };
        while !self.messages.iter().any(delivered) {
            match tokio::time::timeout(WAIT, self.arrived.recv()).await {
                Ok(Some(message)) => self.messages.push(message),
                Ok(None) => panic!("the watch stream ended before the expected event"),
                Err(_) => {
                    panic!("the expected event did not arrive on the watch stream within {WAIT:?}")
                }
            }
        }
    }

    /// Waits for the stream to end, and returns what it delivered or how it failed.
    async fn finish(mut self) -> Result<Vec<WatchTableResponse>, Status> {
        loop {
            match tokio::time::timeout(WAIT, self.arrived.recv()).await {
                Ok(Some(message)) => self.messages.push(message),
                Ok(None) => break,
                Err(_) => {
                    panic!("the watch stream did not end within {WAIT:?} of the table's deletion")
                }
            }
        }
        let ended = within(WAIT, "the end of the watch task", self.task).await;
        ended.expect("the watch task panicked")?;
        Ok(self.messages)
    }
}

/// Checks the messages of a stream that began right after sequence `after` and ran until the
/// table was deleted, against the seat's final view of the finished game.
fn check_stream(game: &Game, after: i64, messages: &[WatchTableResponse], final_view: &TableView) {
    let seed = game.seed;
    let history = &final_view.game_history;
    // The first round was dealt by the join, before `after`; later rounds start on the stream.
    let mut round: i32 = 1;
    let mut next_trick: i32 = 1;
    let mut trick_cards: Vec<PlayedCard> = Vec::new();
    let mut tricks: Vec<Trick> = Vec::new();
    let mut scores: Vec<RoundScore> = Vec::new();
    let mut game_over: Option<&GameOverEvent> = None;
    let mut totals = [0i32; 4];
    let mut last = after;
    let mut deleted = false;
    let mut presences: Vec<(i32, bool)> = Vec::new();

    // The join's hand is the first round's deal; the history reveals it at the end.
    let dealt = |round: i32| {
        let record = &history[(round - 1) as usize];
        let deal = record.deals.iter().find(|deal| deal.seat == HUMAN_SEAT);
        sorted(&deal.expect("the history has the seat's deal").cards)
    };
    assert_eq!(
        sorted(&game.joined.hand),
        dealt(1),
        "seed {seed}: the join's hand is not the history's first deal"
    );

    for (i, message) in messages.iter().enumerate() {
        assert!(
            in_sequence(last, message),
            "seed {seed}: message {i} ({message:?}) has sequence {} after {last}; sequences must grow",
            message.sequence
        );
        last = message.sequence;
        let event = match &message.kind {
            Some(Kind::Event(event)) => event.event.as_ref(),
            Some(Kind::Snapshot(_)) => panic!(
                "seed {seed}: message {i} is a snapshot: the stream could not resume after {after}, so events were lost"
            ),
            Some(Kind::Heartbeat(_)) => {
                panic!("seed {seed}: message {i} is a heartbeat nobody asked for")
            }
            None => None,
        };
        let event = event.unwrap_or_else(|| panic!("seed {seed}: message {i} holds no event"));
        assert!(!deleted, "seed {seed}: message {i} came after table_deleted");
        let round_record = history.get((round - 1) as usize);
        match event {
            // Another seat's cards never reach this seat: its deal, its pass, what it received.
            Event::HandDealt(e) => {
                assert_eq!(
                    e.seat, HUMAN_SEAT,
                    "seed {seed}: the stream showed another seat's hand"
                );
                assert_eq!(
                    sorted(&e.cards),
                    dealt(round),
                    "seed {seed}: round {round}: hand_dealt"
                );
            }
            Event::CardsPassed(e) => {
                assert_eq!(
                    e.seat, HUMAN_SEAT,
                    "seed {seed}: the stream showed another seat's pass"
                );
                let pass =
                    round_record.and_then(|r| r.passes.iter().find(|p| p.from_seat == HUMAN_SEAT));
                assert_eq!(
                    Some(sorted(&e.cards)),
                    pass.map(|p| sorted(&p.cards)),
                    "seed {seed}: round {round}: cards_passed differs from the history"
                );
            }
            Event::CardsReceived(e) => {
                assert_eq!(
                    e.seat, HUMAN_SEAT,
                    "seed {seed}: the stream showed another seat's received cards"
                );
                let pass =
                    round_record.and_then(|r| r.passes.iter().find(|p| p.to_seat == HUMAN_SEAT));
                assert_eq!(
                    Some(sorted(&e.cards)),
                    pass.map(|p| sorted(&p.cards)),
                    "seed {seed}: round {round}: cards_received differs from the history"
                );
            }
            Event::RoundStarted(e) => {
                assert!(
                    e.round_number == round + 1 && scores.len() == round as usize,
                    "seed {seed}: round_started {} after {} scored rounds, in round {round}",
                    e.round_number,
                    scores.len()
                );
                round = e.round_number;
                next_trick = 1;
                tricks.clear();
            }
            Event::CardPlayed(CardPlayedEvent { seat, card, trick_number }) => {
                assert_eq!(
                    *trick_number, next_trick,
                    "seed {seed}: round {round}: card_played for trick {trick_number} while trick {next_trick} is in progress"
                );
                trick_cards.push(PlayedCard { seat: *seat, card: *card });
            }
            Event::TrickWon(e) => {
                let trick = e.trick.clone().expect("trick_won holds a trick");
                assert_eq!(trick.number, next_trick, "seed {seed}: round {round}: trick_won");
                assert!(
                    trick.winner.is_some() && trick.cards.len() == 4,
                    "seed {seed}: round {round} trick {}: winner {:?} with {} cards",
                    trick.number,
                    trick.winner,
                    trick.cards.len()
                );
                assert_eq!(
                    played_notations(&trick.cards),
                    played_notations(&trick_cards),
                    "seed {seed}: round {round} trick {}: trick_won and the card_played events differ",
                    trick.number
                );
                trick_cards.clear();
                tricks.push(trick);
                next_trick += 1;
            }
            Event::RoundScored(e) => {
                let score = e.score.clone().expect("round_scored holds a score");
                assert_eq!(score.round_number, round, "seed {seed}: round_scored");
                assert_eq!(
                    tricks.len(),
                    13,
                    "seed {seed}: round {round} was scored after {} tricks",
                    tricks.len()
                );
                check_round_points(seed, round, &score, &tricks);
                for (seat, total) in totals.iter_mut().enumerate() {
                    *total += score.points[seat];
                }
                assert_eq!(score.total_scores, totals, "seed {seed}: round {round}: total_scores");
                scores.push(score);
            }
            Event::GameOver(e) => {
                assert_eq!(scores.len(), round as usize, "seed {seed}: game_over in round {round}");
                game_over = Some(e);
            }
            Event::TableDeleted(_) => deleted = true,
            Event::PresenceChanged(PresenceChangedEvent { seat, connected }) => {
                presences.push((*seat, *connected));
            }
            Event::PlayerJoined(_)
            | Event::PlayerLeft(_)
            | Event::SeatPassed(_)
            | Event::HeartsBroken(_)
            | Event::TurnChanged(_)
            | Event::TurnTimedOut(_)
            | Event::RematchCreated(_)
            | Event::Reaction(_) => {}
        }
    }

    // The seat is the one player, and its stream was open throughout: the stream reports it
    // connected once, after the resumed events, and nothing else (never a bot).
    assert_eq!(
        presences,
        [(HUMAN_SEAT, true)],
        "seed {seed}: the stream's presence_changed events (seat, connected)"
    );

    let table = table(final_view);
    let game_over =
        game_over.unwrap_or_else(|| panic!("seed {seed}: the stream delivered no game_over event"));
    assert!(deleted, "seed {seed}: the stream ended without a table_deleted event");
    assert_eq!(
        game_over.total_scores, table.total_scores,
        "seed {seed}: game_over and GetTable totals"
    );
    assert_eq!(
        game_over.total_scores, totals,
        "seed {seed}: game_over totals and the rounds' points"
    );
    let result = table
        .result
        .as_ref()
        .unwrap_or_else(|| panic!("seed {seed}: the finished table has no result"));
    assert!(
        !result.winners.is_empty() && !result.losers.is_empty(),
        "seed {seed}: the result {result:?} names no winner or no loser"
    );
    assert_eq!(
        game_over.result.as_ref(),
        Some(result),
        "seed {seed}: game_over and GetTable results"
    );
    assert_eq!(
        table.round_number as usize,
        scores.len(),
        "seed {seed}: rounds scored on the stream"
    );
    assert_eq!(
        final_view.score_history, scores,
        "seed {seed}: GetTable score_history and the stream's round_scored"
    );
    let highest = table.total_scores.iter().max().copied().unwrap_or_default();
    assert!(
        highest >= TARGET_SCORE,
        "seed {seed}: the game ended with totals {:?}, none at the target {TARGET_SCORE}",
        table.total_scores
    );
}

/// Whether a watch stream may deliver `message` after a message numbered `last`: numbers grow,
/// except that an unstored event (a reaction, a presence change), which has no number of its own,
/// repeats the number of the event before it.
fn in_sequence(last: i64, message: &WatchTableResponse) -> bool {
    let unstored = matches!(
        &message.kind,
        Some(Kind::Event(TableEvent {
            event: Some(Event::Reaction(_) | Event::PresenceChanged(_)),
            ..
        }))
    );
    message.sequence > last || (message.sequence == last && unstored)
}

/// The order `in_sequence` demands, checked without a server: a reaction or a presence change
/// may repeat the number before it, nothing else may, and nothing goes back.
#[test]
fn only_an_unstored_event_repeats_a_sequence_number() {
    let event = |sequence: i64, event: Event| WatchTableResponse {
        sequence,
        kind: Some(Kind::Event(TableEvent { event: Some(event), ..TableEvent::default() })),
    };
    let reaction = || Event::Reaction(ReactionEvent { seat: 0, reaction: Reaction::Wave as i32 });
    let presence = || Event::PresenceChanged(PresenceChangedEvent { seat: 1, connected: true });
    let played = || Event::CardPlayed(CardPlayedEvent::default());
    let snapshot =
        WatchTableResponse { sequence: 7, kind: Some(Kind::Snapshot(TableView::default())) };
    let cases = [
        ("an event numbered after the last", event(8, played()), true),
        ("a reaction repeating the last number", event(7, reaction()), true),
        ("a reaction numbered before the last", event(6, reaction()), false),
        ("a presence change repeating the last number", event(7, presence()), true),
        (
            "a presence change numbered after the last (the event before it was another seat's)",
            event(8, presence()),
            true,
        ),
        ("a presence change numbered before the last", event(6, presence()), false),
        ("an event repeating the last number", event(7, played()), false),
        ("a snapshot repeating the last number", snapshot, false),
    ];
    for (what, message, allowed) in cases {
        assert_eq!(in_sequence(7, &message), allowed, "after sequence 7, {what}");
    }
}

/// Checks a round's points against its tricks under the default rules (no bonuses): each seat
/// scores the points of the tricks it won, unless someone shot the moon.
fn check_round_points(seed: i64, round: i32, score: &RoundScore, tricks: &[Trick]) {
    let mut want = vec![0; 4];
    for trick in tricks {
        want[trick.winner.unwrap_or_default() as usize] += trick.points;
    }
    if let Some(shooter) = score.moon_shooter {
        want = vec![26; 4];
        want[shooter as usize] = 0;
    }
    assert_eq!(
        score.points, want,
        "seed {seed}: round {round}: points against the tricks won (moon shooter {:?})",
        score.moon_shooter
    );
}

// ------------------------------------------------------------------------------------ helpers

/// A client of HEARTS_SERVER, whose calls time out after WAIT; None (the test is skipped) when it
/// is unset.
async fn connect() -> Option<(Client, String)> {
    let Ok(address) = std::env::var("HEARTS_SERVER") else {
        assert!(
            std::env::var_os("HEARTS_CONFORMANCE_REQUIRED").is_none(),
            "HEARTS_CONFORMANCE_REQUIRED is set, but HEARTS_SERVER is not"
        );
        eprintln!(
            "skipped: HEARTS_SERVER is unset; run under scripts/with-server.sh to test against a live server"
        );
        return None;
    };
    let endpoint = hearts_client::endpoint(&address)
        .unwrap_or_else(|e| panic!("HEARTS_SERVER={address:?}: {e}"))
        .connect_timeout(WAIT)
        .timeout(WAIT);
    let channel = within(WAIT, "connecting", endpoint.connect())
        .await
        .unwrap_or_else(|e| panic!("connect to {address}: {e}"));
    Some((TableServiceClient::new(channel), address))
}

/// Runs `future`, or fails the test once `limit` has passed.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

/// HEARTS_CONFORMANCE_SEED, or one taken from the clock; either way it is printed.
fn game_seed() -> i64 {
    let seed = match std::env::var("HEARTS_CONFORMANCE_SEED") {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("HEARTS_CONFORMANCE_SEED={text:?} is not an integer")),
        Err(_) => (clock_nanos() & ((1 << 62) - 1)) as i64,
    };
    println!("seed {seed} (rerun with HEARTS_CONFORMANCE_SEED={seed})");
    seed
}

fn clock_nanos() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    now.expect("the clock is after 1970").as_nanos() as u64
}

/// HEARTS_IDENTITY_SECRET, the secret the server checks identity tokens with; None (the test is
/// skipped) when it is unset.
fn identity_secret() -> Option<String> {
    match std::env::var("HEARTS_IDENTITY_SECRET") {
        Ok(secret) if !secret.is_empty() => Some(secret),
        _ => {
            assert!(
                std::env::var_os("HEARTS_CONFORMANCE_REQUIRED").is_none(),
                "HEARTS_CONFORMANCE_REQUIRED is set, but HEARTS_IDENTITY_SECRET is not"
            );
            eprintln!(
                "skipped: HEARTS_IDENTITY_SECRET is unset: the server checks no identity tokens"
            );
            None
        }
    }
}

/// An HS256 JWT for `subject`, valid for an hour, as an app's backend signs it after sign-in; the
/// server checks it with the same `secret`.
fn sign_identity(secret: &str, subject: &str) -> String {
    // Written into the JSON as it is: the tests' subjects need no escaping.
    assert!(subject.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "subject {subject:?}");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("the clock is after 1970");
    let expires = now.as_secs() + 3600;
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = URL_SAFE_NO_PAD.encode(format!(r#"{{"sub":"{subject}","exp":{expires}}}"#));
    let signing = format!("{header}.{claims}");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(signing.as_bytes());
    format!("{signing}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
}

/// The tables where the player of `identity_token` holds a seat (ListPlayerTables).
async fn my_tables(client: &mut Client, seed: i64, identity_token: &str) -> Vec<PlayerTable> {
    let request =
        ListPlayerTablesRequest { identity_token: identity_token.to_owned(), page_size: 0 };
    let response = client.list_player_tables(request).await;
    let response =
        response.unwrap_or_else(|s| panic!("seed {seed}: ListPlayerTables: {}", describe(&s)));
    response.into_inner().tables
}

/// The tables' names and the seats held there, for comparisons and failure messages.
fn places(tables: &[PlayerTable]) -> Vec<(String, i32)> {
    let name = |entry: &PlayerTable| entry.table.as_ref().map(|table| table.name.clone());
    tables.iter().map(|entry| (name(entry).unwrap_or_default(), entry.seat)).collect()
}

/// A fresh AIP-155 request id (a version-4 UUID); the retry-safety itself is the server tests'
/// business.
fn request_id() -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut rng = Rng::new(clock_nanos() ^ CALLS.fetch_add(1, Ordering::Relaxed) << 48);
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&rng.next().to_be_bytes());
    b[8..].copy_from_slice(&rng.next().to_be_bytes());
    b[6] = b[6] & 0x0f | 0x40;
    b[8] = b[8] & 0x3f | 0x80;
    let hex: String = b.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// A request's `authorization`: the token, or none.
fn authorize<T>(token: Option<&BearerToken>, message: T) -> hearts_client::tonic::Request<T> {
    match token {
        Some(token) => token.request(message),
        None => hearts_client::tonic::Request::new(message),
    }
}

fn pass_request(name: &str, cards: Vec<Card>, etag: &str) -> PassCardsRequest {
    PassCardsRequest {
        name: name.to_owned(),
        cards,
        etag: etag.to_owned(),
        request_id: request_id(),
    }
}

fn play_request(name: &str, card: Card, etag: &str) -> PlayCardRequest {
    PlayCardRequest {
        name: name.to_owned(),
        card: Some(card),
        etag: etag.to_owned(),
        request_id: request_id(),
    }
}

/// Keeps a real token's claims and replaces its signature.
fn tamper_signature(token: &str) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "this test assumes a seat token v1.<claims>.<signature>");
    format!("{}.{}.{}", parts[0], parts[1], "A".repeat(parts[2].len()))
}

/// The table of a QuickJoin's view.
fn quick_table(response: &QuickJoinResponse) -> &Table {
    table(response.view.as_ref().expect("QuickJoin answered no view"))
}

fn table(view: &TableView) -> &Table {
    view.table.as_ref().expect("the view holds the table")
}

fn phase(view: &TableView) -> Phase {
    table(view).phase()
}

fn etag(view: &TableView) -> String {
    table(view).etag.clone()
}

fn current_trick_cards(view: &TableView) -> &[PlayedCard] {
    view.current_trick.as_ref().map_or(&[], |trick| trick.cards.as_slice())
}

/// The first card of the deck that the seat does not hold.
fn not_in_hand(view: &TableView) -> Card {
    let deck = ["2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A"]
        .iter()
        .flat_map(|rank| ["C", "D", "H", "S"].map(|suit| parse(&format!("{rank}{suit}"))));
    deck.into_iter()
        .find(|card| !view.hand.contains(card))
        .expect("a hand never holds the whole deck")
}

fn parse(text: &str) -> Card {
    text.parse().unwrap_or_else(|e| panic!("the test's own card: {e}"))
}

fn sorted(cards: &[Card]) -> Vec<String> {
    let mut cards = cards.to_vec();
    cards.sort_by_key(|card| (card.suit, card.rank));
    cards.iter().map(Card::to_string).collect()
}

fn notations(cards: &[Card]) -> String {
    let words: Vec<String> = cards.iter().map(Card::to_string).collect();
    format!("[{}]", words.join(" "))
}

fn played_notations(cards: &[PlayedCard]) -> String {
    let words: Vec<String> = cards
        .iter()
        .map(|played| match played.card {
            Some(card) => format!("{}:{card}", played.seat),
            None => format!("{}:none", played.seat),
        })
        .collect();
    format!("[{}]", words.join(" "))
}

/// A status with its ErrorInfo reason, for failure messages.
fn describe(status: &Status) -> String {
    match status.reason() {
        Some(reason) => format!("{:?} {reason}: {}", status.code(), status.message()),
        None => format!("{:?}: {}", status.code(), status.message()),
    }
}

/// SplitMix64: the test's own reproducible choices, without a dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}
