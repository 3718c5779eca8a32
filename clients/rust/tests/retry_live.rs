//! `call_with_retry` against a live Hearts server: a `PlayCard` whose answer is lost on the way
//! back is sent again with the same `request_id`, and the server answers it from its memory: the
//! card is played once, and the retry gets the first call's answer.
//!
//! The client reaches the server through a TCP relay on loopback that, once told to, passes the
//! client's bytes on but withholds the server's; when the server has played the card (a direct
//! `GetTable` shows it gone from the hand), the relay closes that connection, as when a server's
//! answer is lost with its connection. The client's channel then connects again through the
//! relay, which passes everything on from then.
//!
//! Skipped without HEARTS_SERVER (a failure when HEARTS_CONFORMANCE_REQUIRED is set, as
//! clients/rust/ci.sh does). Every call, every wait and the whole test are bounded.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearts_client::tonic::transport::Channel;
use hearts_client::v1::{
    BotLevel, CreateTableRequest, DeleteTableRequest, GetTableRequest, JoinTableRequest,
    PassCardsRequest, PlayCardRequest, Seat, SeatOccupant, Table, TableView,
};
use hearts_client::{BearerToken, RetryOptions, TableServiceClient, call_with_retry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Bounds each call and each wait.
const WAIT: Duration = Duration::from_secs(10);
/// Bounds the whole test.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The test's seat; the other three are heuristic bots, which move within each response.
const SEAT: i32 = 0;

#[tokio::test]
async fn a_play_whose_answer_is_lost_is_sent_again_and_played_once() {
    let Some(address) = server() else { return };
    within(TEST_TIMEOUT, "the lost-answer test", async {
        let mut direct = connect(&address).await;
        let (name, seat, creator, view) = seat_at_new_table(&mut direct).await;
        let card = *view.legal_cards.first().expect("the seat's turn after the bots'");
        println!("{name}: playing {card} from {} cards", view.hand.len());

        let relay = Relay::start(&address).await;
        let mut through_relay = connect(&relay.address).await;
        // The connection is up before the relay withholds anything.
        let request = seat.request(GetTableRequest { name: name.clone() });
        within(WAIT, "GetTable through the relay", through_relay.get_table(request)).await.unwrap();

        relay.withhold_answers();
        // request_id is left empty: call_with_retry fills it, and sends it again.
        let request =
            PlayCardRequest { name: name.clone(), card: Some(card), ..Default::default() };
        let options =
            RetryOptions { backoff: Duration::from_millis(50), ..RetryOptions::default() };
        let request = seat.request(request);
        let play =
            tokio::spawn(
                async move { call_with_retry(&mut through_relay, request, options).await },
            );

        // The server plays the card; its answer goes nowhere.
        let mut played = None;
        for _ in 0..100 {
            let current = view_of(&mut direct, &name, &seat).await;
            if !current.hand.contains(&card) {
                played = Some(current);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let played = played.expect("the server played the card within 5 s");
        assert!(relay.withheld() > 0, "no answer was withheld");
        assert!(!play.is_finished(), "the call ended without its answer");
        relay.drop_connections();

        let answer = within(WAIT, "the retried PlayCard", play).await.expect("the task");
        let answer = answer.expect("PlayCard, tried again").into_inner();
        let answered = answer.view.expect("PlayCard's view");
        let now = view_of(&mut direct, &name, &seat).await;
        println!(
            "{name}: {} cards left; sequence {}, {} connections",
            now.hand.len(),
            now.sequence,
            relay.connections()
        );
        assert_eq!(relay.connections(), 2, "one connection lost, one new for the retry");
        // Played once: one card fewer. Sent again as a new play, the card would have been
        // refused (CARD_NOT_IN_HAND, or NOT_YOUR_TURN), not answered.
        assert_eq!(now.hand.len(), view.hand.len() - 1, "cards left");
        assert!(!now.hand.contains(&card));
        assert!(played.sequence > view.sequence);
        // The retry's answer is the play's: the table as it was right after it (the bots moved
        // within it), as it is now.
        assert_eq!(answered.sequence, now.sequence);
        let etag = |view: &TableView| view.table.as_ref().map(|table| table.etag.clone());
        assert_eq!(etag(&answered), etag(&now));
        assert_eq!(answered.hand, now.hand);

        let request = DeleteTableRequest { name, ..DeleteTableRequest::default() };
        within(WAIT, "DeleteTable", direct.delete_table(creator.request(request)))
            .await
            .expect("DeleteTable");
    })
    .await;
}

/// A new table with three heuristic bots, the seat joined and its pass made: the table's name,
/// the seat's and the creator's tokens, and the seat's view, on its turn to play.
async fn seat_at_new_table(
    client: &mut TableServiceClient<Channel>,
) -> (String, BearerToken, BearerToken, TableView) {
    let bot = |seat| Seat {
        seat,
        occupant: SeatOccupant::Bot as i32,
        bot_level: BotLevel::Heuristic as i32,
        ..Seat::default()
    };
    let table = Table {
        display_name: "rust retry: lost answer".into(),
        seats: vec![bot(1), bot(2), bot(3)],
        deck_seed: Some(17),
        ..Table::default()
    };
    let request = CreateTableRequest { table: Some(table), ..CreateTableRequest::default() };
    let created = within(WAIT, "CreateTable", client.create_table(request)).await;
    let created = created.expect("CreateTable").into_inner();
    let name = created.view.and_then(|view| view.table).expect("CreateTable's table").name;
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
    let mut view = joined.view.expect("JoinTable's view");
    if view.cards_to_pass > 0 {
        let cards = view.legal_cards[..view.cards_to_pass as usize].to_vec();
        let request = PassCardsRequest { name: name.clone(), cards, ..Default::default() };
        let passed = within(WAIT, "PassCards", client.pass_cards(seat.request(request))).await;
        view = passed.expect("PassCards").into_inner().view.expect("PassCards' view");
    }
    (name, seat, creator, view)
}

/// The seat's view now.
async fn view_of(
    client: &mut TableServiceClient<Channel>,
    name: &str,
    seat: &BearerToken,
) -> TableView {
    let request = seat.request(GetTableRequest { name: name.to_owned() });
    let response = within(WAIT, "GetTable", client.get_table(request)).await;
    response.expect("GetTable").into_inner().view.expect("GetTable's view")
}

// -------------------------------------------------------------------------- the lost answer

/// A TCP relay on 127.0.0.1 to the server that can withhold the server's bytes on the
/// connections open now, then close them.
struct Relay {
    address: String,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Whether the server's bytes on the connections open now are withheld.
    withholding: AtomicBool,
    /// How many of the server's bytes were withheld.
    withheld: AtomicUsize,
    accepted: AtomicUsize,
    connections: Mutex<JoinSet<()>>,
}

impl Relay {
    async fn start(server: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the relay");
        let address = listener.local_addr().expect("the relay's address").to_string();
        let shared = Arc::new(Shared::default());
        let (server, relay) = (server.to_owned(), shared.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = TcpStream::connect(&server).await.expect("the relay connects");
                relay.accepted.fetch_add(1, Ordering::SeqCst);
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = upstream.into_split();
                let mut connections = relay.connections.lock().expect("connections");
                connections.spawn(forward(client_read, server_write, None));
                connections.spawn(forward(server_read, client_write, Some(relay.clone())));
            }
        });
        Relay { address, shared }
    }

    /// From now on, the server's bytes on the open connections go nowhere.
    fn withhold_answers(&self) {
        self.shared.withholding.store(true, Ordering::SeqCst);
    }

    /// Closes every connection open now, both ways; the relay passes everything on for the
    /// connections after.
    fn drop_connections(&self) {
        self.shared.connections.lock().expect("connections").abort_all();
        self.shared.withholding.store(false, Ordering::SeqCst);
    }

    fn withheld(&self) -> usize {
        self.shared.withheld.load(Ordering::SeqCst)
    }

    fn connections(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

/// Copies `from` to `to` until either closes; the server's side (`relay` given) drops what it
/// reads while the relay withholds.
async fn forward(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, relay: Option<Arc<Shared>>) {
    let mut buffer = vec![0; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buffer).await {
        if let Some(relay) = &relay
            && relay.withholding.load(Ordering::SeqCst)
        {
            relay.withheld.fetch_add(n, Ordering::SeqCst);
            continue;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
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

/// A client whose calls time out after WAIT.
async fn connect(address: &str) -> TableServiceClient<Channel> {
    let endpoint = hearts_client::endpoint(address).expect("an address").timeout(WAIT);
    let channel = within(WAIT, "connecting", endpoint.connect_timeout(WAIT).connect()).await;
    TableServiceClient::new(channel.unwrap_or_else(|e| panic!("connect to {address}: {e}")))
}

/// Runs `future`, or fails the test once `limit` has passed.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}
