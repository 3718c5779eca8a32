//! A watch stream on a connection that died without a word ends with an error, thanks to the
//! keepalive pings that `hearts_client::endpoint` turns on, instead of hanging.
//!
//! The client reaches the live server at HEARTS_SERVER through a TCP relay on loopback that the
//! test then cuts: it stops forwarding both ways but keeps every socket open (no FIN, no RST), as
//! when a NAT entry is dropped or a laptop sleeps. Without keepalive the stream would wait
//! forever; with the interval at 10 s (the shortest the server accepts) and a 2 s timeout it
//! fails about 12 s after the cut, with the bare `Unknown` that tonic 0.14 makes of it.
//!
//! Skipped without HEARTS_SERVER (a failure when HEARTS_CONFORMANCE_REQUIRED is set, as
//! clients/rust/ci.sh does). Every wait is bounded; the test takes about 12 s.

use std::error::Error as _;
use std::time::{Duration, Instant};

use hearts_client::tonic::{Code, Status};
use hearts_client::v1::{
    BotLevel, CreateTableRequest, DeleteTableRequest, Seat, SeatOccupant, Table, WatchTableRequest,
    watch_table_response::Kind,
};
use hearts_client::{BearerToken, TableServiceClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Bounds each call and the wait for the snapshot.
const WAIT: Duration = Duration::from_secs(10);
/// The test's keepalive: the server's shortest accepted interval, and a short timeout.
const INTERVAL: Duration = Duration::from_secs(10);
const TIMEOUT: Duration = Duration::from_secs(2);
/// How long the stream may take to fail after the cut (about INTERVAL + TIMEOUT is expected).
const FAIL_WITHIN: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_watch_stream_on_a_dead_connection_fails_instead_of_hanging() {
    let Ok(server) = std::env::var("HEARTS_SERVER") else {
        assert!(
            std::env::var_os("HEARTS_CONFORMANCE_REQUIRED").is_none(),
            "HEARTS_CONFORMANCE_REQUIRED is set, but HEARTS_SERVER is not"
        );
        eprintln!("skipped: HEARTS_SERVER is unset; run under scripts/with-server.sh");
        return;
    };

    // A table with three bots and an empty seat: its game does not start, the stream is quiet.
    let endpoint = hearts_client::endpoint(&server).expect("HEARTS_SERVER is an address");
    let endpoint = endpoint.connect_timeout(WAIT).timeout(WAIT);
    let channel = tokio::time::timeout(WAIT, endpoint.connect()).await;
    let channel = channel.expect("connected within WAIT").expect("connect to HEARTS_SERVER");
    let mut client = TableServiceClient::new(channel);
    let bot = |seat| Seat {
        seat,
        occupant: SeatOccupant::Bot as i32,
        bot_level: BotLevel::Random as i32,
        ..Seat::default()
    };
    let table = Table {
        display_name: "rust keepalive".into(),
        seats: vec![bot(1), bot(2), bot(3)],
        ..Table::default()
    };
    let request = CreateTableRequest { table: Some(table), ..CreateTableRequest::default() };
    let created = client.create_table(request).await.expect("CreateTable").into_inner();
    let name = created.view.and_then(|view| view.table).expect("CreateTable's table").name;

    // A spectator's stream through the relay, on a channel of its own.
    let (relay, cut) = relay(&server).await;
    let endpoint = hearts_client::endpoint(&relay.to_string())
        .expect("the relay's address")
        .http2_keep_alive_interval(INTERVAL)
        .keep_alive_timeout(TIMEOUT)
        .connect_timeout(WAIT);
    let channel = tokio::time::timeout(WAIT, endpoint.connect()).await;
    let channel = channel.expect("connected within WAIT").expect("connect to the relay");
    let mut watcher = TableServiceClient::new(channel);
    let request = WatchTableRequest { name: name.clone(), ..WatchTableRequest::default() };
    let watch = tokio::time::timeout(WAIT, watcher.watch_table(request)).await;
    let mut stream = watch.expect("WatchTable within WAIT").expect("WatchTable").into_inner();
    let first = tokio::time::timeout(WAIT, stream.message()).await.expect("a snapshot within WAIT");
    let first = first.expect("the stream's first message").expect("a first message");
    assert!(matches!(first.kind, Some(Kind::Snapshot(_))), "the stream starts with a snapshot");

    cut.send(true).expect("the relay runs");
    let cut_at = Instant::now();
    let ended = tokio::time::timeout(FAIL_WITHIN, stream.message()).await;
    let elapsed = cut_at.elapsed();
    let status = match ended {
        Err(_) => panic!("the stream did not end within {FAIL_WITHIN:?} of the cut"),
        Ok(Ok(message)) => panic!("after the cut the stream gave {message:?}, not an error"),
        Ok(Err(status)) => status,
    };
    println!("the stream failed {elapsed:?} after the cut: {status:?}");
    // When the ping goes unanswered, hyper closes the connection, and h2 fails its open streams
    // with a broken pipe. tonic maps only hyper's own timeout error to Unavailable; the stream's
    // body error is the broken pipe, which it reports as Unknown ("error reading a body from
    // connection").
    assert_eq!(status.code(), Code::Unknown, "{status:?}");
    assert!(broken_pipe(&status), "not a broken pipe underneath: {status:?}");
    assert!(elapsed >= INTERVAL, "failed after {elapsed:?}, before a ping was due");

    let creator = BearerToken::new(&created.creator_token).expect("an ASCII token");
    let request = DeleteTableRequest { name, ..DeleteTableRequest::default() };
    client.delete_table(creator.request(request)).await.expect("DeleteTable");
}

/// Whether the status's source chain tells of a broken pipe (h2's error, which holds an
/// `io::Error` of kind BrokenPipe, but gives no `source()` to reach it by).
fn broken_pipe(status: &Status) -> bool {
    let mut source = status.source();
    while let Some(error) = source {
        if error.to_string().contains("broken pipe") {
            return true;
        }
        source = error.source();
    }
    false
}

/// A TCP relay on 127.0.0.1 to `server`, and its switch: once `true` is sent, it forwards nothing
/// more either way, on every connection, and keeps their sockets open until the test ends.
async fn relay(server: &str) -> (std::net::SocketAddr, watch::Sender<bool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the relay");
    let address = listener.local_addr().expect("the relay's address");
    let (cut, is_cut) = watch::channel(false);
    let server = server.to_owned();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = TcpStream::connect(&server).await.expect("the relay connects");
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = upstream.into_split();
            tokio::spawn(forward(client_read, server_write, is_cut.clone()));
            tokio::spawn(forward(server_read, client_write, is_cut.clone()));
        }
    });
    (address, cut)
}

/// Copies `from` to `to` until the relay is cut, then holds both without a read or a write.
async fn forward(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut is_cut: watch::Receiver<bool>,
) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let read = tokio::select! {
            biased;
            _ = is_cut.wait_for(|cut| *cut) => break,
            read = from.read(&mut buffer) => read,
        };
        // The end of the stream or an error before the cut: pass it on as a close.
        let Ok(n @ 1..) = read else { return };
        tokio::select! {
            biased;
            _ = is_cut.wait_for(|cut| *cut) => break,
            written = to.write_all(&buffer[..n]) => if written.is_err() { return },
        }
    }
    // Cut: both sockets stay open, so that neither end hears of it.
    let _open = (from, to);
    std::future::pending::<()>().await;
}
