//! `call_with_retry` against a scripted gRPC server in the test: which failures are tried again
//! and which reach the app unchanged, for reads, mutations and `SendReaction`; how many times;
//! the waits between; a drop or a deadline during a wait; the `request_id` and the metadata each
//! attempt sends; an attempt's timeout; a connection lost before the answer.
//!
//! The server is HTTP/2 on 127.0.0.1, written here with h2 (which tonic's channel uses already):
//! it records each call and answers with the next of its scripted answers, an error status as a
//! tonic server sends it (`Status::into_http`: a trailers-only answer with the `ErrorInfo` in
//! `grpc-status-details-bin`), or OK with an empty message. tonic's own server is not used: its
//! `server` feature, on for the tests, would be on for the library under test too (Cargo builds
//! one tonic for both), and it changes how tonic's client turns transport errors into statuses.
//!
//! Needs no Hearts server; every wait is bounded.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearts_client::prost::Message;
use hearts_client::tonic::codegen::{Bytes, http};
use hearts_client::tonic::transport::Channel;
use hearts_client::tonic::{Code, Status};
use hearts_client::v1::{
    Card, GetTableRequest, PlayCardRequest, Reaction, SendReactionRequest, SuggestMoveRequest,
};
use hearts_client::{
    BearerToken, RetryOptions, StatusDetails, TableServiceClient, call_with_retry,
};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::time::Instant;
use tonic_types::{ErrorDetails, StatusExt};

/// Bounds each call of a test.
const WAIT: Duration = Duration::from_secs(10);
/// A backoff short enough not to slow the tests down.
const QUICK: RetryOptions = RetryOptions {
    max_retries: 3,
    backoff: Duration::from_millis(1),
    attempt_timeout: None,
    deadline: None,
};

// ------------------------------------------------------------------------------------ the tests

#[tokio::test]
async fn each_failure_safe_to_retry_is_tried_again() {
    // (what failed, the call)
    let cases: [(fn() -> Status, Method); 15] = [
        (|| Status::unavailable("connection refused"), Method::GetTable),
        (|| refusal(Code::Unavailable, "STORE_UNAVAILABLE"), Method::GetTable),
        (|| Status::deadline_exceeded("deadline"), Method::SuggestMove),
        (|| refusal(Code::ResourceExhausted, "OVERLOADED"), Method::GetTable),
        (|| Status::cancelled("shed"), Method::GetTable),
        (|| Status::unavailable("connection refused"), Method::PlayCard),
        (|| refusal(Code::Unavailable, "SHUTTING_DOWN"), Method::PlayCard),
        (|| Status::deadline_exceeded("deadline"), Method::PlayCard),
        (|| refusal(Code::ResourceExhausted, "OVERLOADED"), Method::PlayCard),
        (|| Status::cancelled("shed"), Method::PlayCard),
        (|| refusal(Code::Aborted, "CONFLICT"), Method::PlayCard),
        (|| Status::unknown("error reading a body from connection"), Method::PlayCard),
        // SendReaction only when it did not run.
        (|| refusal(Code::ResourceExhausted, "OVERLOADED"), Method::SendReaction),
        (|| Status::cancelled("shed"), Method::SendReaction),
        (|| Status::cancelled("stopping"), Method::SendReaction),
    ];
    for (failure, method) in cases {
        let server = Scripted::start(vec![Answer::Fail(failure())]).await;
        let result = method.call(&mut server.client().await, QUICK).await;
        let what = format!("{method:?} after {:?}", failure());
        assert!(result.is_ok(), "{what}: {result:?}");
        assert_eq!(server.calls().len(), 2, "{what}: tried again once");
    }
}

#[tokio::test]
async fn a_failure_not_safe_to_retry_reaches_the_app_unchanged() {
    let cases: [(fn() -> Status, Method); 13] = [
        (|| refusal(Code::InvalidArgument, "INVALID_CARD"), Method::PlayCard),
        (|| refusal(Code::FailedPrecondition, "MUST_FOLLOW_SUIT"), Method::PlayCard),
        (|| refusal(Code::Aborted, "ETAG_MISMATCH"), Method::PlayCard),
        (|| refusal(Code::ResourceExhausted, "TOO_MANY_TABLES"), Method::PlayCard),
        (|| Status::resource_exhausted("message too large"), Method::PlayCard),
        (|| refusal(Code::Unauthenticated, "TOKEN_INVALID"), Method::PlayCard),
        (|| refusal(Code::Internal, "INTERNAL"), Method::PlayCard),
        (|| refusal(Code::NotFound, "TABLE_NOT_FOUND"), Method::GetTable),
        // A read has no request_id: a conflict is not its to settle.
        (|| refusal(Code::Aborted, "CONFLICT"), Method::GetTable),
        // SendReaction may have acted.
        (|| refusal(Code::ResourceExhausted, "TOO_MANY_REACTIONS"), Method::SendReaction),
        (|| Status::unavailable("connection refused"), Method::SendReaction),
        (|| refusal(Code::Unavailable, "STORE_UNAVAILABLE"), Method::SendReaction),
        (|| Status::deadline_exceeded("deadline"), Method::SendReaction),
    ];
    for (failure, method) in cases {
        let server = Scripted::start(vec![Answer::Fail(failure())]).await;
        let result = method.call(&mut server.client().await, QUICK).await;
        let (sent, what) = (failure(), format!("{method:?} after {:?}", failure()));
        let status = result.expect_err(&what);
        assert_eq!(server.calls().len(), 1, "{what}: sent once");
        assert_eq!(status.code(), sent.code(), "{what}");
        assert_eq!(status.message(), sent.message(), "{what}");
        assert_eq!(status.details(), sent.details(), "{what}: the details");
        assert_eq!(status.reason(), sent.reason(), "{what}");
    }
}

#[tokio::test]
async fn retries_stop_after_max_retries_with_the_last_attempts_status() {
    for (max_retries, attempts) in [(3, 4), (1, 2), (0, 1)] {
        let answers = (1..=6).map(|n| Answer::Fail(unavailable(n))).collect();
        let server = Scripted::start(answers).await;
        let options = RetryOptions { max_retries, ..QUICK };
        let status = Method::PlayCard.call(&mut server.client().await, options).await.unwrap_err();
        assert_eq!(server.calls().len(), attempts, "max_retries {max_retries}");
        // The last attempt's status, details and all.
        let last = unavailable(attempts);
        assert_eq!(status.message(), last.message(), "max_retries {max_retries}");
        assert_eq!(status.details(), last.details(), "max_retries {max_retries}");
    }
    // The default: 3 retries.
    let answers = (1..=6).map(|n| Answer::Fail(unavailable(n))).collect();
    let server = Scripted::start(answers).await;
    let options = RetryOptions { backoff: Duration::from_millis(1), ..RetryOptions::default() };
    let status = Method::GetTable.call(&mut server.client().await, options).await.unwrap_err();
    assert_eq!((server.calls().len(), status.message()), (4, "attempt 4"));
}

#[tokio::test]
async fn the_waits_between_attempts_double_with_jitter() {
    let first = Duration::from_millis(60);
    let answers = (1..=4).map(|n| Answer::Fail(unavailable(n))).collect();
    let server = Scripted::start(answers).await;
    let options = RetryOptions { backoff: first, ..RetryOptions::default() };
    Method::PlayCard.call(&mut server.client().await, options).await.unwrap_err();
    let calls = server.calls();
    assert_eq!(calls.len(), 4);
    for (n, pair) in calls.windows(2).enumerate() {
        let full = first * (1 << n);
        let gap = pair[1].at - pair[0].at;
        println!("wait {}: {gap:?} (of {full:?})", n + 1);
        // At least half the full wait; at most all of it, and a slow machine's delay.
        assert!(gap >= full / 2, "wait {}: {gap:?}, under half of {full:?}", n + 1);
        assert!(gap < full + Duration::from_millis(150), "wait {}: {gap:?} of {full:?}", n + 1);
    }
}

#[tokio::test]
async fn dropping_the_call_during_a_wait_stops_it_at_once() {
    let server = Scripted::start(vec![Answer::Fail(unavailable(1))]).await;
    let mut client = server.client().await;
    // The first wait is 5 to 10 s; the app gives up long before.
    let options = RetryOptions { backoff: Duration::from_secs(10), ..RetryOptions::default() };
    let started = Instant::now();
    let call = Method::PlayCard.call(&mut client, options);
    let given_up = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(given_up.is_err(), "the call ended by itself: {given_up:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "dropped after {:?}", started.elapsed());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.calls().len(), 1, "an attempt after the drop");
}

#[tokio::test]
async fn a_wait_past_the_deadline_is_not_begun() {
    let server = Scripted::start(vec![Answer::Fail(unavailable(1))]).await;
    let mut client = server.client().await;
    let deadline = Instant::now() + Duration::from_millis(500);
    // The first wait (1 to 2 s) would end after the deadline: the error comes at once.
    let options = RetryOptions {
        backoff: Duration::from_secs(2),
        deadline: Some(deadline),
        ..RetryOptions::default()
    };
    let status = Method::PlayCard.call(&mut client, options).await.unwrap_err();
    assert!(Instant::now() < deadline, "returned after the deadline");
    assert_eq!(status.message(), "attempt 1");
    let calls = server.calls();
    assert_eq!(calls.len(), 1);
    // The attempt was told the time left, as its grpc-timeout.
    let timeout = calls[0].grpc_timeout.as_deref().expect("a grpc-timeout");
    assert!(grpc_timeout(timeout) <= Duration::from_millis(500), "grpc-timeout {timeout}");
}

#[tokio::test]
async fn an_empty_request_id_is_filled_once_and_every_attempt_sends_it_with_the_token() {
    let token = BearerToken::new("seat-token").unwrap();
    let answers = vec![Answer::Fail(unavailable(1)), Answer::Fail(unavailable(2))];
    let server = Scripted::start(answers).await;
    let mut client = server.client().await;
    let request = play_request("");
    let mine = request.clone();
    call_with_retry(&mut client, token.request(request), QUICK).await.expect("the third attempt");

    let calls = server.calls();
    assert_eq!(calls.len(), 3);
    let sent: Vec<_> =
        calls.iter().map(|call| PlayCardRequest::decode(call.message.clone()).unwrap()).collect();
    let id = &sent[0].request_id;
    assert!(is_uuid_v4(id), "request_id {id:?}");
    for (call, message) in calls.iter().zip(&sent) {
        assert_eq!(message, &PlayCardRequest { request_id: id.clone(), ..mine.clone() });
        assert_eq!(call.path, "/hearts.v1.TableService/PlayCard");
        assert_eq!(call.authorization.as_deref(), Some("Bearer seat-token"));
    }
    assert_eq!(mine.request_id, "", "the caller's message");

    // Another call, another id.
    let server = Scripted::start(vec![]).await;
    let request = token.request(play_request(""));
    call_with_retry(&mut server.client().await, request, QUICK).await.unwrap();
    let other = PlayCardRequest::decode(server.calls()[0].message.clone()).unwrap();
    assert!(is_uuid_v4(&other.request_id) && other.request_id != *id, "{}", other.request_id);
}

#[tokio::test]
async fn a_request_id_the_caller_set_is_kept() {
    let server = Scripted::start(vec![Answer::Fail(refusal(Code::Aborted, "CONFLICT"))]).await;
    // A plain message works as well as a Request, and so does a client with an interceptor.
    let channel = server.channel().await;
    let token = BearerToken::new("seat-token").unwrap();
    let mut client = TableServiceClient::with_interceptor(channel, token);
    call_with_retry(&mut client, play_request("my-id"), QUICK).await.expect("the second attempt");
    let calls = server.calls();
    assert_eq!(calls.len(), 2);
    for call in &calls {
        let message = PlayCardRequest::decode(call.message.clone()).unwrap();
        assert_eq!(message.request_id, "my-id");
        assert_eq!(call.authorization.as_deref(), Some("Bearer seat-token"));
    }
}

#[tokio::test]
async fn an_attempt_that_times_out_is_tried_again_but_not_a_reaction() {
    let late = || Answer::Late(Duration::from_secs(3));
    let options = RetryOptions { attempt_timeout: Some(Duration::from_millis(200)), ..QUICK };

    let server = Scripted::start(vec![late()]).await;
    let started = Instant::now();
    Method::PlayCard.call(&mut server.client().await, options).await.expect("the second attempt");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    let calls = server.calls();
    assert_eq!(calls.len(), 2);
    for call in &calls {
        let timeout = call.grpc_timeout.as_deref().expect("a grpc-timeout");
        assert_eq!(grpc_timeout(timeout), Duration::from_millis(200), "grpc-timeout {timeout}");
    }

    // A reaction whose attempt timed out may have been shown: it is not sent again.
    let server = Scripted::start(vec![late()]).await;
    let status = Method::SendReaction.call(&mut server.client().await, options).await.unwrap_err();
    println!("a reaction's timed-out attempt: {status:?}");
    assert_eq!(status.code(), Code::Cancelled, "tonic's expired timeout");
    assert_eq!(server.calls().len(), 1);
}

#[tokio::test]
async fn a_connection_lost_before_the_answer_is_tried_again_but_not_for_a_reaction() {
    let server = Scripted::start(vec![Answer::HangUp]).await;
    let mut client = server.client().await;
    Method::PlayCard.call(&mut client, QUICK).await.expect("the attempt on a new connection");
    assert_eq!(server.calls().len(), 2);
    assert_eq!(server.connections(), 2, "one connection lost, one new");

    let server = Scripted::start(vec![Answer::HangUp]).await;
    let status = Method::SendReaction.call(&mut server.client().await, QUICK).await.unwrap_err();
    println!("a reaction's lost connection: {status:?}");
    // tonic reports a connection closed under a call as a bare Unknown.
    assert_eq!((status.code(), status.reason()), (Code::Unknown, None), "{status:?}");
    assert_eq!(server.calls().len(), 1);
}

#[tokio::test]
async fn a_retrying_call_can_run_in_a_task_of_its_own() {
    let server = Scripted::start(vec![Answer::Fail(unavailable(1))]).await;
    let mut client = server.client().await;
    let request = GetTableRequest { name: "tables/t1".into() };
    // The future is Send, as tokio::spawn requires.
    let task = tokio::spawn(async move { call_with_retry(&mut client, request, QUICK).await });
    task.await.expect("the task").expect("the second attempt");
    assert_eq!(server.calls().len(), 2);
}

// ---------------------------------------------------------------------------- the calls

/// The methods the tests call: a read, a mutation, and SendReaction.
#[derive(Clone, Copy, Debug)]
enum Method {
    GetTable,
    SuggestMove,
    PlayCard,
    SendReaction,
}

impl Method {
    /// Calls the method with `call_with_retry`, bounded by WAIT; the response's message is
    /// dropped.
    async fn call(
        self,
        client: &mut TableServiceClient<Channel>,
        options: RetryOptions,
    ) -> Result<(), Status> {
        let name = "tables/t1".to_owned();
        let call = async {
            match self {
                Method::GetTable => {
                    call_with_retry(client, GetTableRequest { name }, options).await.map(drop)
                }
                Method::SuggestMove => {
                    let request = SuggestMoveRequest { name };
                    call_with_retry(client, request, options).await.map(drop)
                }
                Method::PlayCard => {
                    call_with_retry(client, play_request(""), options).await.map(drop)
                }
                Method::SendReaction => {
                    let reaction = Reaction::Laugh as i32;
                    let request = SendReactionRequest { name, reaction };
                    call_with_retry(client, request, options).await.map(drop)
                }
            }
        };
        tokio::time::timeout(WAIT, call).await.expect("the call ended within WAIT")
    }
}

fn play_request(request_id: &str) -> PlayCardRequest {
    PlayCardRequest {
        name: "tables/t1".into(),
        card: Some("QS".parse::<Card>().unwrap()),
        request_id: request_id.into(),
        ..Default::default()
    }
}

/// A status as the Hearts server makes it: its `ErrorInfo` in the details.
fn refusal(code: Code, reason: &str) -> Status {
    let metadata = HashMap::from([("table".to_owned(), "tables/t1".to_owned())]);
    let details = ErrorDetails::with_error_info(reason, "hearts.v1", metadata);
    Status::with_error_details(code, format!("refused: {reason}"), details)
}

/// The n-th of a run of failures, told apart by its message.
fn unavailable(n: usize) -> Status {
    let details = ErrorDetails::with_error_info("STORE_UNAVAILABLE", "hearts.v1", HashMap::new());
    Status::with_error_details(Code::Unavailable, format!("attempt {n}"), details)
}

fn is_uuid_v4(id: &str) -> bool {
    let groups: Vec<_> = id.split('-').map(str::len).collect();
    groups == [8, 4, 4, 4, 12]
        && id.chars().all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
        && id.as_bytes()[14] == b'4'
        && b"89ab".contains(&id.as_bytes()[19])
}

/// A `grpc-timeout` value (`"200000u"`, say) as a duration.
fn grpc_timeout(value: &str) -> Duration {
    let (amount, unit) = value.split_at(value.len() - 1);
    let amount: u64 = amount.parse().expect("a grpc-timeout amount");
    match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => panic!("a grpc-timeout unit: {value}"),
    }
}

// ---------------------------------------------------------------------- the scripted server

/// What the scripted server answers a call with.
enum Answer {
    /// This status, as a tonic server sends it.
    Fail(Status),
    /// OK, but only after this long: the attempt's timeout passes first.
    Late(Duration),
    /// No answer: the connection is closed, as when a server goes away.
    HangUp,
}

/// One call the server received.
#[derive(Clone)]
struct Call {
    path: String,
    authorization: Option<String>,
    grpc_timeout: Option<String>,
    /// The request message, encoded.
    message: Bytes,
    at: Instant,
}

#[derive(Default)]
struct State {
    /// The answers still to give, in order; OK once they run out.
    answers: VecDeque<Answer>,
    calls: Vec<Call>,
    connections: usize,
}

/// A gRPC server on 127.0.0.1 that answers each call with the next scripted answer.
struct Scripted {
    address: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Scripted {
    async fn start(answers: Vec<Answer>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the scripted server");
        let address = listener.local_addr().expect("the server's address");
        let state = State { answers: answers.into(), ..State::default() };
        let state = Arc::new(Mutex::new(state));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                shared.lock().unwrap().connections += 1;
                tokio::spawn(serve(socket, shared.clone()));
            }
        });
        Scripted { address, state }
    }

    async fn channel(&self) -> Channel {
        let endpoint = hearts_client::endpoint(&self.address.to_string()).unwrap();
        let connected = tokio::time::timeout(WAIT, endpoint.connect()).await;
        connected.expect("connected within WAIT").expect("connect to the scripted server")
    }

    async fn client(&self) -> TableServiceClient<Channel> {
        TableServiceClient::new(self.channel().await)
    }

    fn calls(&self) -> Vec<Call> {
        self.state.lock().unwrap().calls.clone()
    }

    fn connections(&self) -> usize {
        self.state.lock().unwrap().connections
    }
}

/// Serves one connection until the client closes it, or an answer hangs up.
async fn serve(socket: tokio::net::TcpStream, state: Arc<Mutex<State>>) {
    let Ok(mut connection) = h2::server::handshake(socket).await else { return };
    let hang_up = Arc::new(Notify::new());
    loop {
        let accepted = tokio::select! {
            _ = hang_up.notified() => return, // the connection is dropped: closed
            accepted = connection.accept() => accepted,
        };
        let Some(Ok((request, respond))) = accepted else { return };
        tokio::spawn(answer(request, respond, state.clone(), hang_up.clone()));
    }
}

/// Records the call and gives the next answer.
async fn answer(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    state: Arc<Mutex<State>>,
    hang_up: Arc<Notify>,
) {
    let (head, mut body) = request.into_parts();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    let header = |name: &str| Some(head.headers.get(name)?.to_str().ok()?.to_owned());
    let call = Call {
        path: head.uri.path().to_owned(),
        authorization: header("authorization"),
        grpc_timeout: header("grpc-timeout"),
        // After the gRPC frame's 5-byte prefix (not compressed, the length).
        message: Bytes::from(bytes.split_off(5.min(bytes.len()))),
        at: Instant::now(),
    };
    let next = {
        let mut state = state.lock().unwrap();
        state.calls.push(call);
        state.answers.pop_front()
    };
    match next {
        Some(Answer::Fail(status)) => {
            let _ = respond.send_response(status.into_http::<()>(), true);
            return;
        }
        Some(Answer::Late(wait)) => tokio::time::sleep(wait).await,
        Some(Answer::HangUp) => {
            hang_up.notify_one();
            return;
        }
        None => {}
    }
    // OK, with an empty message: a 5-byte frame of length 0, then grpc-status 0.
    let head = http::Response::builder().header("content-type", "application/grpc").body(());
    let Ok(mut stream) = respond.send_response(head.unwrap(), false) else { return };
    let _ = stream.send_data(Bytes::from_static(&[0; 5]), false);
    let trailers = http::HeaderMap::from_iter([(
        http::HeaderName::from_static("grpc-status"),
        http::HeaderValue::from_static("0"),
    )]);
    let _ = stream.send_trailers(trailers);
}
