//! `watch_table_resumable` against a live Hearts server: a stream cut twice mid-game resumes to
//! the same stored events an uncut stream delivers, in order, without a gap or a repeat, asking
//! each time for the right `after_sequence`; a stream whose connection is dropped resumes on a
//! new one; a refused stream is not opened again, and the ended stream stays ended; a snapshot
//! below the last sequence delivered is followed by its events; failures in a row stop after
//! `max_reconnects`, with a backoff between them; the stream ends after `table_deleted`;
//! dropping it hangs up.
//!
//! Streams are cut by `Cutting`, a tower service between the generated client and its channel:
//! it ends chosen streams after a number of messages with `UNAVAILABLE` in the trailers, as a
//! server does, so the error takes tonic's own path. It also records what each call asked for,
//! and can send the server an earlier `after_sequence` than the helper asked for, so that the
//! server repeats events the helper has delivered already.
//!
//! Skipped without HEARTS_SERVER (a failure when HEARTS_CONFORMANCE_REQUIRED is set, as
//! clients/rust/ci.sh does). Every call, every wait and each whole test is bounded.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt, stream::FusedStream};
use hearts_client::prost::Message;
use hearts_client::tonic::codegen::{Bytes, Service, StdError, http};
use hearts_client::tonic::{Code, Request, Status, body::Body, transport::Channel};
use hearts_client::v1::{
    BotLevel, CreateTableRequest, DeleteTableRequest, JoinTableRequest, PassCardsRequest,
    PlayCardRequest, PresenceChangedEvent, Seat, SeatOccupant, Table, TableEvent, TableView,
    WatchTableRequest, WatchTableResponse, table_event::Event, watch_table_response::Kind,
};
use hearts_client::{
    BearerToken, StatusDetails, TableServiceClient, WatchOptions, watch_table_resumable,
};
use http_body::{Body as _, Frame};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// Bounds each call and each wait for a message.
const WAIT: Duration = Duration::from_secs(10);
/// Bounds each whole test.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// A short backoff, so that the resumes do not slow the tests down.
const QUICK: Duration = Duration::from_millis(10);
/// The test's seat; the other three are heuristic bots, which move within each response.
const SEAT: i32 = 0;

#[tokio::test]
async fn a_stream_cut_twice_resumes_to_the_same_events_without_gaps_or_repeats() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the cut-stream test", async {
        let mut client = connect(&address).await;
        let mut game = Game::new(&mut client, "resumed watch", 11).await;
        // Events before the watch opens, which it replays (it starts after sequence 0) ...
        let before_watch = game.play(&mut client, 1).await;

        let reference = direct(&address, game.seat.request(game.watch_request(Some(0)))).await;
        // The first stream is cut after 4 messages, the second after 20; each resume gets 3
        // events it delivered already (or fewer: another seat's private events are not sent).
        let cutting = Cutting::new(watch_channel(&address).await, &[4, 20], 3);
        let options = WatchOptions {
            token: Some(game.seat.clone()),
            // Two cuts, but not in a row: a message in between resets the count.
            max_reconnects: 1,
            backoff: QUICK,
        };
        let resumed = TableServiceClient::new(cutting.clone());
        let resumed = pump(watch_table_resumable(resumed, game.watch_request(Some(0)), options));

        // ... and events while it runs, a move every 50 ms.
        let last = game.play(&mut client, 8).await;
        let reference = stored_until(reference, last).await.expect("the uncut stream");
        let resumed = stored_until(resumed, last).await.expect("the resumed stream");
        println!("{}: stored sequences {reference:?}", game.name);
        assert!(reference.is_sorted_by(|a, b| a < b), "not increasing: {reference:?}");
        assert_eq!(reference.last(), Some(&last));
        assert_eq!(resumed, reference, "the resumed stream against the uncut one");

        let calls = cutting.calls();
        println!("{}: watched from sequence {before_watch}; calls {calls:?}", game.name);
        assert_eq!(calls.len(), 3, "two cuts, two resumes: {calls:?}");
        assert_eq!(calls[0].asked, Some(0));
        for (cut, resume) in calls.iter().zip(&calls[1..]) {
            // The last stored event the cut stream passed on, or what that stream asked for.
            let delivered = cut.passed.or(cut.asked);
            assert_eq!(resume.asked, delivered, "a resume's after_sequence: {calls:?}");
            assert!(resume.asked > cut.asked, "the cut stream passed no event on: {calls:?}");
        }
        let repeated: usize = calls.iter().map(|call| call.repeated).sum();
        assert!(repeated > 0, "the server repeated no event, so none was skipped: {calls:?}");
        assert!(calls[2].asked > Some(before_watch), "the second cut came before the moves");
    })
    .await;
}

#[tokio::test]
async fn a_stream_whose_connection_drops_resumes_on_a_new_one() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the dropped-connection test", async {
        let mut client = connect(&address).await;
        let mut game = Game::new(&mut client, "dropped connection", 13).await;

        let after = Some(game.view.sequence);
        let reference = direct(&address, game.seat.request(game.watch_request(after))).await;
        let relay = Relay::start(&address).await;
        let options = WatchOptions {
            token: Some(game.seat.clone()),
            backoff: QUICK,
            ..WatchOptions::default()
        };
        let through_relay = TableServiceClient::new(watch_channel(&relay.address).await);
        let resumed = watch_table_resumable(through_relay, game.watch_request(after), options);
        let mut resumed = pump(resumed);
        // The stream is open once its first message (the seat's own presence) is in.
        let first = within(WAIT, "the first message", resumed.recv()).await;
        let first = first.expect("a first message").expect("the first message");
        assert!(presence(&first).is_some_and(|p| p.seat == SEAT && p.connected), "{first:?}");

        relay.drop_connections();
        let last = game.play(&mut client, 4).await;
        let resumed = stored_until(resumed, last).await.expect("the resumed stream");
        let reference = stored_until(reference, last).await.expect("the direct stream");
        println!("{}: stored sequences {reference:?}", game.name);
        assert_eq!(resumed, reference, "the resumed stream against the direct one");
        assert_eq!(relay.connections(), 2, "one connection dropped, one new");
    })
    .await;
}

#[tokio::test]
async fn a_refused_stream_is_not_opened_again() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the refused-stream test", async {
        let cutting = Cutting::new(watch_channel(&address).await, &[], 0);
        let request = WatchTableRequest {
            name: "tables/0000nosuchtable00000000".into(),
            ..WatchTableRequest::default()
        };
        let options = WatchOptions { backoff: QUICK, ..WatchOptions::default() };
        let client = TableServiceClient::new(cutting.clone());
        let mut watch = watch_table_resumable(client, request, options);
        let error = within(WAIT, "the refusal", watch.message()).await.expect_err("a refusal");
        assert_eq!(error.code(), Code::NotFound, "{error:?}");
        assert_eq!(error.reason().as_deref(), Some("TABLE_NOT_FOUND"), "{error:?}");
        assert_eq!(cutting.calls().len(), 1, "one attempt");
        let after = within(WAIT, "the end after the error", watch.message()).await;
        assert!(matches!(after, Ok(None)), "after the error: {after:?}");
        // Ended, it stays ended, as tonic's Streaming does.
        assert!(watch.is_terminated());
        let again = within(WAIT, "the end, asked again", watch.message()).await;
        assert!(matches!(again, Ok(None)), "asked again: {again:?}");
        assert_eq!(cutting.calls().len(), 1, "one attempt");
    })
    .await;
}

#[tokio::test]
async fn a_snapshot_below_the_last_sequence_is_followed_by_its_events() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the lower-snapshot test", async {
        let mut client = connect(&address).await;
        let mut game = Game::new(&mut client, "lower snapshot", 16).await;
        // Asked for what follows a sequence the table never reached (a server that lost writes,
        // or a number stored for a table of the same name before), the server sends a snapshot
        // at its own, lower, last sequence: the events after it must come, not be skipped.
        let far = game.view.sequence + 1000;
        let options = WatchOptions { backoff: QUICK, ..WatchOptions::default() };
        let watcher = TableServiceClient::new(watch_channel(&address).await);
        let mut watch = watch_table_resumable(watcher, game.watch_request(Some(far)), options);
        let first = within(WAIT, "the snapshot", watch.message()).await;
        let first = first.expect("the snapshot").expect("a first message");
        assert!(matches!(first.kind, Some(Kind::Snapshot(_))), "{first:?}");
        assert!(first.sequence < far, "{first:?}");
        let after_move = game.play(&mut client, 1).await;
        let mut events = Vec::new();
        while events.last() < Some(&after_move) {
            let message = within(WAIT, "the move's events", watch.message()).await;
            let message = message.expect("the move's events").expect("a message");
            if stored(&message) {
                events.push(message.sequence);
            }
        }
        assert!(events.first() > Some(&first.sequence), "{events:?} after {}", first.sequence);
    })
    .await;
}

#[tokio::test]
async fn failures_in_a_row_end_the_stream_after_max_reconnects() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the failures-in-a-row test", async {
        let mut client = connect(&address).await;
        let game = Game::new(&mut client, "failures in a row", 14).await;
        // Every stream fails before its first message.
        let cutting = Cutting::new(watch_channel(&address).await, &[0; 8], 0);
        let backoff = Duration::from_millis(100);
        let options = WatchOptions { token: Some(game.seat.clone()), max_reconnects: 2, backoff };
        let watcher = TableServiceClient::new(cutting.clone());
        let mut watch = watch_table_resumable(watcher, game.watch_request(None), options);
        let started = Instant::now();
        let error = within(WAIT, "the last failure", watch.message()).await.expect_err("a failure");
        let elapsed = started.elapsed();
        assert_eq!(error.code(), Code::Unavailable, "{error:?}");
        assert_eq!(error.message(), CUT_MESSAGE, "{error:?}");
        assert_eq!(cutting.calls().len(), 3, "the first attempt and two more");
        // Waits of 100 ms and 200 ms, each at least half of that.
        assert!(elapsed >= backoff / 2 + backoff, "reopened without a backoff: {elapsed:?}");
        assert!(matches!(watch.message().await, Ok(None)), "the stream ends after the error");
    })
    .await;
}

#[tokio::test]
async fn the_stream_ends_after_table_deleted() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the table-deleted test", async {
        let mut client = connect(&address).await;
        let game = Game::new(&mut client, "table deleted", 15).await;
        // The stream's messages: the seat's presence, then table_deleted, after which the
        // stream is cut. A watch that went on would resume, and find no table.
        let cutting = Cutting::new(watch_channel(&address).await, &[2], 0);
        let options = WatchOptions {
            token: Some(game.seat.clone()),
            backoff: QUICK,
            ..WatchOptions::default()
        };
        let watcher = TableServiceClient::new(cutting.clone());
        let request = game.watch_request(Some(game.view.sequence));
        let mut watch = watch_table_resumable(watcher, request, options);
        let first = within(WAIT, "the first message", watch.message()).await;
        let first = first.expect("the first message").expect("a first message");
        assert!(presence(&first).is_some_and(|p| p.seat == SEAT && p.connected), "{first:?}");

        let request =
            DeleteTableRequest { name: game.name.clone(), ..DeleteTableRequest::default() };
        let deleted = client.delete_table(game.creator.request(request));
        within(WAIT, "DeleteTable", deleted).await.expect("DeleteTable");
        let last = within(WAIT, "table_deleted", watch.message()).await;
        let last = last.expect("table_deleted").expect("a table_deleted event");
        let deleted = matches!(
            last.kind,
            Some(Kind::Event(TableEvent { event: Some(Event::TableDeleted(_)), .. }))
        );
        assert!(deleted, "{last:?}");
        let after = within(WAIT, "the end", watch.message()).await;
        assert!(matches!(after, Ok(None)), "after table_deleted: {after:?}");
        assert_eq!(cutting.calls().len(), 1, "not opened again");
    })
    .await;
}

#[tokio::test]
async fn dropping_the_stream_hangs_up() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the hang-up test", async {
        let mut client = connect(&address).await;
        let game = Game::new(&mut client, "hang up", 12).await;
        let options = WatchOptions { token: Some(game.seat.clone()), ..WatchOptions::default() };
        let watcher = TableServiceClient::new(watch_channel(&address).await);
        let mut watch = watch_table_resumable(watcher, game.watch_request(None), options);
        let first = within(WAIT, "the snapshot", watch.message()).await;
        let first = first.expect("the snapshot").expect("a first message");
        assert!(matches!(first.kind, Some(Kind::Snapshot(_))), "{first:?}");

        // A spectator is told the seat is connected while its stream is open, and that it left
        // (2 s after the server saw the stream end) once the stream is dropped.
        let mut spectator = direct(&address, Request::new(game.watch_request(None))).await;
        let seat_presence = |message: &WatchTableResponse| {
            presence(message).filter(|p| p.seat == SEAT).map(|p| p.connected)
        };
        assert!(next_where(&mut spectator, seat_presence).await, "connected before the drop");
        drop(watch);
        assert!(!next_where(&mut spectator, seat_presence).await, "connected after the drop");
    })
    .await;
}

// --------------------------------------------------------------------------------- the game

/// A table with three heuristic bots and the test's seat, SEAT, joined.
struct Game {
    name: String,
    seat: BearerToken,
    creator: BearerToken,
    /// The seat's view after its last move.
    view: TableView,
}

impl Game {
    async fn new(client: &mut TableServiceClient<Channel>, label: &str, seed: i64) -> Game {
        let bot = |seat| Seat {
            seat,
            occupant: SeatOccupant::Bot as i32,
            bot_level: BotLevel::Heuristic as i32,
            ..Seat::default()
        };
        let table = Table {
            display_name: format!("rust watch: {label}"),
            seats: vec![bot(1), bot(2), bot(3)],
            deck_seed: Some(seed),
            ..Table::default()
        };
        let request = CreateTableRequest { table: Some(table), ..CreateTableRequest::default() };
        let created = within(WAIT, "CreateTable", client.create_table(request)).await;
        let created = created.expect("CreateTable").into_inner();
        let name = created.view.and_then(|view| view.table).expect("CreateTable's table").name;
        println!("{label}: {name}");
        let request = JoinTableRequest {
            name: name.clone(),
            seat: Some(SEAT),
            player_display_name: "Ada".into(),
            ..JoinTableRequest::default()
        };
        let joined = within(WAIT, "JoinTable", client.join_table(request)).await;
        let joined = joined.expect("JoinTable").into_inner();
        let seat = BearerToken::new(&joined.seat_token).expect("an ASCII token");
        let creator = BearerToken::new(&created.creator_token).expect("an ASCII token");
        Game { name, seat, creator, view: joined.view.expect("JoinTable's view") }
    }

    fn watch_request(&self, after_sequence: Option<i64>) -> WatchTableRequest {
        WatchTableRequest {
            name: self.name.clone(),
            after_sequence,
            ..WatchTableRequest::default()
        }
    }

    /// Makes `moves` legal moves (the pass first, if one is due) 50 ms apart, and returns the
    /// sequence after the last: the bots' moves that followed are in it, and nothing more
    /// happens until the seat moves again.
    async fn play(&mut self, client: &mut TableServiceClient<Channel>, moves: usize) -> i64 {
        for _ in 0..moves {
            let view = &self.view;
            let response = if view.cards_to_pass > 0 {
                let cards = view.legal_cards[..view.cards_to_pass as usize].to_vec();
                let request =
                    PassCardsRequest { name: self.name.clone(), cards, ..Default::default() };
                let passed = client.pass_cards(self.seat.request(request));
                within(WAIT, "PassCards", passed).await.expect("PassCards").into_inner().view
            } else {
                let card = *view.legal_cards.first().expect("the seat's turn after the bots'");
                let request = PlayCardRequest {
                    name: self.name.clone(),
                    card: Some(card),
                    ..Default::default()
                };
                let played = client.play_card(self.seat.request(request));
                within(WAIT, "PlayCard", played).await.expect("PlayCard").into_inner().view
            };
            self.view = response.expect("the move's view");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.view.sequence
    }
}

// ---------------------------------------------------------------------------- the cut streams

/// The `grpc-message` of a stream that `Cutting` cut.
const CUT_MESSAGE: &str = "cut by the test";

/// What `Cutting` saw of one WatchTable call.
#[derive(Clone, Debug, Default)]
struct Call {
    /// The `after_sequence` the client asked for.
    asked: Option<i64>,
    /// The last stored sequence (snapshot or stored event) passed on to the client.
    passed: Option<i64>,
    /// How many stored messages at or below `asked` the server sent (after a rewind).
    repeated: usize,
}

/// A tower service between a `TableServiceClient` and its channel that cuts the i-th WatchTable
/// stream after `cuts[i]` messages (the ones after it run uncut), ending it with `UNAVAILABLE`
/// in the trailers, and sends each call after the first with `after_sequence` lowered by
/// `rewind`.
#[derive(Clone)]
struct Cutting {
    channel: Channel,
    cuts: Arc<[usize]>,
    rewind: i64,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Cutting {
    fn new(channel: Channel, cuts: &[usize], rewind: i64) -> Cutting {
        Cutting { channel, cuts: cuts.into(), rewind, calls: Arc::default() }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().expect("calls").clone()
    }
}

impl Service<http::Request<Body>> for Cutting {
    type Response = http::Response<Body>;
    type Error = StdError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, StdError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StdError>> {
        self.channel.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        assert_eq!(request.uri().path(), "/hearts.v1.TableService/WatchTable", "only watches");
        // The channel that was polled ready takes the call; the clone stays for the next one.
        let clone = self.channel.clone();
        let ready = std::mem::replace(&mut self.channel, clone);
        let this = Cutting { channel: ready, ..self.clone() };
        Box::pin(this.watch(request))
    }
}

impl Cutting {
    async fn watch(
        mut self,
        request: http::Request<Body>,
    ) -> Result<http::Response<Body>, StdError> {
        let (parts, mut body) = request.into_parts();
        let mut framed = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            framed.extend_from_slice(&frame?.into_data().expect("a request has no trailers"));
        }
        let mut message = WatchTableRequest::decode(&framed[5..])?;
        let asked = message.after_sequence;
        let index = {
            let mut calls = self.calls.lock().expect("calls");
            calls.push(Call { asked, ..Call::default() });
            calls.len() - 1
        };
        if index > 0 {
            message.after_sequence = asked.map(|after| (after - self.rewind).max(0));
        }
        let mut framed = vec![0];
        framed.extend_from_slice(&(message.encoded_len() as u32).to_be_bytes());
        message.encode(&mut framed)?;
        let body = Body::new(Frames(VecDeque::from([Frame::data(Bytes::from(framed))])));
        let response = self.channel.call(http::Request::from_parts(parts, body)).await?;
        let left = self.cuts.get(index).copied();
        let calls = self.calls;
        Ok(response
            .map(|inner| Body::new(CutBody { inner, buffer: Vec::new(), left, calls, index })))
    }
}

/// A body of the frames given.
struct Frames(VecDeque<Frame<Bytes>>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }
}

/// A WatchTable response's body, passed on one gRPC message at a time and recorded in
/// `calls[index]`; after `left` messages it ends with `UNAVAILABLE` in the trailers.
struct CutBody {
    inner: Body,
    /// What has come of the next message.
    buffer: Vec<u8>,
    /// Messages still to pass on before the cut; `None`: never cut; `Some(0)`: cut.
    left: Option<usize>,
    calls: Arc<Mutex<Vec<Call>>>,
    index: usize,
}

impl http_body::Body for CutBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = &mut *self;
        loop {
            if this.left == Some(0) {
                this.left = None; // the trailers end the body; nothing is polled after them
                let mut trailers = http::HeaderMap::new();
                trailers.insert("grpc-status", http::HeaderValue::from_static("14"));
                trailers.insert("grpc-message", http::HeaderValue::from_static(CUT_MESSAGE));
                return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
            }
            // A message is a flag byte, a 4-byte big-endian length, then the message.
            if let Some(length) = this.buffer.get(1..5) {
                let length = 5 + u32::from_be_bytes(length.try_into().expect("4 bytes")) as usize;
                if this.buffer.len() >= length {
                    let framed: Vec<u8> = this.buffer.drain(..length).collect();
                    this.record(&WatchTableResponse::decode(&framed[5..]).expect("a response"));
                    this.left = this.left.map(|left| left - 1);
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(framed)))));
                }
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => this.buffer.extend_from_slice(&data),
                    Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
                },
                other => return Poll::Ready(other),
            }
        }
    }
}

impl CutBody {
    fn record(&self, message: &WatchTableResponse) {
        if !stored(message) {
            return;
        }
        let mut calls = self.calls.lock().expect("calls");
        let call = &mut calls[self.index];
        if call.asked.is_some_and(|asked| message.sequence <= asked) {
            call.repeated += 1;
        }
        call.passed = Some(message.sequence);
    }
}

// -------------------------------------------------------------------------- the dropped link

/// A TCP relay on 127.0.0.1 to the server, whose connections the test can drop.
struct Relay {
    address: String,
    connections: Arc<Mutex<JoinSet<()>>>,
    accepted: Arc<Mutex<usize>>,
}

impl Relay {
    async fn start(server: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the relay");
        let address = listener.local_addr().expect("the relay's address").to_string();
        let connections = Arc::new(Mutex::new(JoinSet::new()));
        let accepted = Arc::new(Mutex::new(0));
        let (server, tasks, count) = (server.to_owned(), connections.clone(), accepted.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut upstream = TcpStream::connect(&server).await.expect("the relay connects");
                *count.lock().expect("count") += 1;
                tasks.lock().expect("tasks").spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                });
            }
        });
        Relay { address, connections, accepted }
    }

    /// Closes every connection open now, both ways; the relay takes new ones.
    fn drop_connections(&self) {
        self.connections.lock().expect("tasks").abort_all();
    }

    fn connections(&self) -> usize {
        *self.accepted.lock().expect("count")
    }
}

// -------------------------------------------------------------------------------- helpers

/// HEARTS_SERVER, or None (the test is skipped) when it is unset.
fn server() -> Option<String> {
    let address = std::env::var("HEARTS_SERVER").ok();
    if address.is_none() {
        assert!(
            std::env::var_os("HEARTS_CONFORMANCE_REQUIRED").is_none(),
            "HEARTS_CONFORMANCE_REQUIRED is set, but HEARTS_SERVER is not"
        );
        eprintln!("skipped: HEARTS_SERVER is unset; run under scripts/with-server.sh");
    }
    address
}

/// A client whose calls time out after WAIT, for everything but watching.
async fn connect(address: &str) -> TableServiceClient<Channel> {
    let endpoint = hearts_client::endpoint(address).expect("an address").timeout(WAIT);
    let channel = within(WAIT, "connecting", endpoint.connect_timeout(WAIT).connect()).await;
    TableServiceClient::new(channel.unwrap_or_else(|e| panic!("connect to {address}: {e}")))
}

/// A channel of its own for a stream, without a timeout, which would end it.
async fn watch_channel(address: &str) -> Channel {
    let endpoint = hearts_client::endpoint(address).expect("an address").connect_timeout(WAIT);
    let channel = within(WAIT, "connecting for WatchTable", endpoint.connect()).await;
    channel.unwrap_or_else(|e| panic!("connect to {address}: {e}"))
}

/// A plain `watch_table` stream (no resuming) on a channel of its own, read as `pump` does.
async fn direct(address: &str, request: Request<WatchTableRequest>) -> Messages {
    let mut client = TableServiceClient::new(watch_channel(address).await);
    let response = within(WAIT, "WatchTable", client.watch_table(request)).await;
    let stream = response.expect("WatchTable").into_inner();
    let (sender, receiver) = mpsc::unbounded_channel();
    // The client goes along, so that its channel lasts as long as the stream.
    tokio::spawn(async move { forward(stream, sender, client).await });
    receiver
}

/// Reads `stream` in a task of its own, so that it keeps up while the test plays.
fn pump<S>(stream: S) -> Messages
where
    S: Stream<Item = Result<WatchTableResponse, Status>> + Send + Unpin + 'static,
{
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(forward(stream, sender, ()));
    receiver
}

/// Sends what `stream` yields to `sender` until either ends, holding `_keep` meanwhile.
async fn forward<S: Stream<Item = Result<WatchTableResponse, Status>> + Unpin, K>(
    mut stream: S,
    sender: mpsc::UnboundedSender<Result<WatchTableResponse, Status>>,
    _keep: K,
) {
    while let Some(item) = stream.next().await {
        if sender.send(item).is_err() {
            break;
        }
    }
}

/// What a stream yields, as `pump` passes it on.
type Messages = mpsc::UnboundedReceiver<Result<WatchTableResponse, Status>>;

/// The sequences of the stored messages (snapshots and stored events) that arrive, up to and
/// including `last`.
async fn stored_until(mut messages: Messages, last: i64) -> Result<Vec<i64>, Status> {
    let mut sequences = Vec::new();
    while sequences.last() < Some(&last) {
        let message = within(WAIT, "the next message", messages.recv()).await;
        let message = message.expect("the stream ended early")?;
        if stored(&message) {
            sequences.push(message.sequence);
        }
    }
    Ok(sequences)
}

/// The first value `pick` finds in a message that arrives.
async fn next_where<T>(
    messages: &mut Messages,
    pick: impl Fn(&WatchTableResponse) -> Option<T>,
) -> T {
    loop {
        let message = within(WAIT, "the next message", messages.recv()).await;
        let message = message.expect("the stream ended early").expect("a message");
        if let Some(value) = pick(&message) {
            return value;
        }
    }
}

/// Whether the message is a snapshot or a stored event: not a reaction, a presence change or a
/// heartbeat, which repeat the sequence before them.
fn stored(message: &WatchTableResponse) -> bool {
    match &message.kind {
        Some(Kind::Snapshot(_)) => true,
        Some(Kind::Event(TableEvent { event, .. })) => {
            !matches!(event, Some(Event::Reaction(_) | Event::PresenceChanged(_)))
        }
        _ => false,
    }
}

fn presence(message: &WatchTableResponse) -> Option<&PresenceChangedEvent> {
    match &message.kind {
        Some(Kind::Event(TableEvent { event: Some(Event::PresenceChanged(presence)), .. })) => {
            Some(presence)
        }
        _ => None,
    }
}

/// Runs `future`, or fails the test once `limit` has passed.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}
