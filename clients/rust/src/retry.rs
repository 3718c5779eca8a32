//! Unary calls that are tried again when that is safe, as docs/guide.md ("Disconnects") asks of
//! every client: the rule of the Python client's `HeartsClient._call`, as one function for every
//! unary method of the generated client.
//!
//! It never spawns a task, and keeps nothing between calls: dropping its future ends it at once,
//! in an attempt or in a wait, and nothing more is sent.
//!
//! One rule is tonic's own, as in the resuming watch: a bare `Unknown` (no `ErrorInfo`) is a
//! connection that broke under the call (tonic 0.14, built as a client only, reports a connection
//! closed before the answer so), and is tried again like `Unavailable`; the server always
//! answers with a reason.

use std::future::Future;
use std::hash::BuildHasher;
use std::time::Duration;

use tokio::time::Instant;
use tonic::codegen::{Body, Bytes, StdError};
use tonic::{Code, Request, Response, Status};

use crate::v1::*;
use crate::{StatusDetails, TableServiceClient};
use sealed::{Call as _, Kind};

/// The longest wait between two attempts of a unary call.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How [`call_with_retry`] retries: `RetryOptions::default()` is 3 retries, the first after
/// 200 ms, no timeout; set fields with `..RetryOptions::default()` for the rest.
#[derive(Clone, Copy, Debug)]
pub struct RetryOptions {
    /// How many times a failed call is tried again (default 3: 4 attempts in all); 0 turns
    /// retrying off.
    pub max_retries: u32,
    /// The wait before the first retry, doubled for each further one up to 5 s; each wait is
    /// taken at random between half of it and all of it (default 200 ms).
    pub backoff: Duration,
    /// The timeout of each attempt (default none), sent as its `grpc-timeout`. tonic's channel
    /// ends an attempt that takes longer with a bare `Cancelled` ("Timeout expired"), the server
    /// with `DeadlineExceeded`; both are tried again, as a call that may have run.
    pub attempt_timeout: Option<Duration>,
    /// When the whole call must be over (default none). No attempt's timeout reaches past it,
    /// and a wait that would is not begun: the last attempt's error is returned at once.
    pub deadline: Option<Instant>,
}

impl Default for RetryOptions {
    fn default() -> Self {
        RetryOptions {
            max_retries: 3,
            backoff: Duration::from_millis(200),
            attempt_timeout: None,
            deadline: None,
        }
    }
}

/// What [`call_with_retry`] sends: the request message of a unary `TableService` method, or a
/// `tonic::Request` of one (to carry metadata, such as a [`BearerToken`](crate::BearerToken)'s).
/// Every method but `WatchTable`, which
/// [`watch_table_resumable`](crate::watch_table_resumable) resumes instead.
///
/// The message's type picks the method (`PlayCardRequest`: `play_card`) and what may be tried
/// again (see [`call_with_retry`]). Implemented here for each method; it cannot be implemented
/// elsewhere.
pub trait RetryRequest: sealed::Sealed + Sized {
    /// The request message: `PlayCardRequest` for a `PlayCardRequest` or a
    /// `Request<PlayCardRequest>`.
    type Message: sealed::Call<Response = Self::Response>;
    /// The method's response message: `PlayCardResponse` for `PlayCard`.
    type Response;

    /// The request as the method takes it.
    #[doc(hidden)]
    fn into_call(self) -> Request<Self::Message>;
}

/// Sends `request` as its method of `client` does (`client.play_card(request)` for a
/// `PlayCardRequest`), and tries it again after a failure that the server or the network caused
/// and that cannot make it act twice. Returns the first answer, or the error that ended it: the
/// last attempt's status, unchanged.
///
/// Every attempt sends the same message, with the same metadata (the `authorization` of a
/// [`BearerToken::request`](crate::BearerToken::request), say) and extensions. A mutation's
/// empty `request_id` is filled once, with a random UUID, before the first attempt: the server
/// answers a retry of an applied call from its memory, never acting twice. A `request_id` the
/// caller set is kept; keep it the same across the app's own retries of one action too.
///
/// What is tried again, after a wait (see [`RetryOptions`]):
///
/// | the call failed with | tried again for |
/// | --- | --- |
/// | `Unavailable` (any reason), `DeadlineExceeded`, a bare `Unknown` (tonic's lost connection), an attempt's timeout | reads (`GetTable`, `ListTables`, `ListPlayerTables`, `SuggestMove`) and mutations (`CreateTable`, `DeleteTable`, `JoinTable`, `LeaveTable`, `PassCards`, `PlayCard`, `RematchTable`, `QuickJoin`) |
/// | `ResourceExhausted` / `OVERLOADED`, a bare `Cancelled` (the server shed the call or is stopping: it did not run) | every call, `SendReaction` too |
/// | `Aborted` / `CONFLICT` (too contended to commit; nothing applied) | mutations |
///
/// Nothing else is: not `Aborted` / `ETAG_MISMATCH` (read the table again), nor the caller's
/// own limits (`TOO_MANY_REACTIONS`, `TOO_MANY_TABLES`, a bare `ResourceExhausted`: a message
/// over the size limit), nor a refused request (`InvalidArgument`, `FailedPrecondition`,
/// `NotFound`, `Unauthenticated`, ...), nor `SendReaction` after a failure it may have run
/// through: it carries no `request_id`, and a retry could show the reaction twice.
///
/// To cancel, drop the future (`tokio::select!`, `tokio::time::timeout`, `JoinHandle::abort`):
/// it stops at once, in an attempt or in a wait, and returns nothing. To have the last error
/// instead when time runs out, give [`RetryOptions::deadline`].
///
/// ```no_run
/// # async fn example(
/// #     mut client: hearts_client::TableServiceClient<hearts_client::tonic::transport::Channel>,
/// #     seat: hearts_client::BearerToken,
/// #     name: String,
/// #     card: hearts_client::v1::Card,
/// # ) -> Result<(), hearts_client::tonic::Status> {
/// use hearts_client::v1::PlayCardRequest;
/// use hearts_client::{RetryOptions, call_with_retry};
///
/// // request_id is left empty: call_with_retry fills it, once for every attempt.
/// let request = PlayCardRequest { name, card: Some(card), ..Default::default() };
/// let options = RetryOptions::default();
/// let played = call_with_retry(&mut client, seat.request(request), options).await?;
/// println!("{:?}", played.into_inner().view);
/// # Ok(())
/// # }
/// ```
pub async fn call_with_retry<T, R>(
    client: &mut TableServiceClient<T>,
    request: R,
    options: RetryOptions,
) -> Result<Response<R::Response>, Status>
where
    R: RetryRequest,
    T: tonic::client::GrpcService<tonic::body::Body> + Send,
    T::Error: Into<StdError>,
    T::Future: Send,
    T::ResponseBody: Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as Body>::Error: Into<StdError> + Send,
{
    // tonic's Request is not Clone: each attempt is built again from its parts.
    let (metadata, extensions, mut message) = request.into_call().into_parts();
    if let Some(id) = message.request_id()
        && id.is_empty()
    {
        *id = new_request_id();
    }
    let mut retries = 0;
    loop {
        let mut attempt =
            Request::from_parts(metadata.clone(), extensions.clone(), message.clone());
        let remaining =
            options.deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        if let Some(timeout) = min_some(options.attempt_timeout, remaining) {
            attempt.set_timeout(timeout);
        }
        let status = match R::Message::call(client, attempt).await {
            Ok(response) => return Ok(response),
            Err(status) => status,
        };
        if retries >= options.max_retries || !retryable(R::Message::KIND, &status) {
            return Err(status);
        }
        retries += 1;
        let wait = backoff(options.backoff, retries, MAX_BACKOFF);
        if options.deadline.is_some_and(|deadline| Instant::now() + wait >= deadline) {
            return Err(status);
        }
        tokio::time::sleep(wait).await;
    }
}

/// The smaller of two durations, either of which may be unset.
fn min_some(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether a call of `kind` that failed with `status` may be tried again.
fn retryable(kind: Kind, status: &Status) -> bool {
    let conflict = status.code() == Code::Aborted
        && status.reason().is_some_and(|reason| reason == "CONFLICT");
    match kind {
        Kind::Read => not_run(status) || may_have_run(status),
        Kind::Mutation => not_run(status) || may_have_run(status) || conflict,
        Kind::ActsOnce => not_run(status),
    }
}

/// Whether the server refused the call before running it: `ResourceExhausted` / `OVERLOADED`
/// (shedding load), or gRPC's bare `Cancelled`, with which a saturated server ends calls past its
/// limit of pending calls, and a stopping one those it will not run. (tonic ends a call on a
/// connection the server asked to move on with a bare `Cancelled` too, before sending it.) Not
/// an attempt's own timeout, which tonic reports as a bare `Cancelled` as well.
pub(crate) fn not_run(status: &Status) -> bool {
    match status.code() {
        Code::ResourceExhausted => status.reason().is_some_and(|reason| reason == "OVERLOADED"),
        Code::Cancelled => status.reason().is_none() && !timed_out(status),
        _ => false,
    }
}

/// Whether the server or the network failed under the call, which may or may not have run:
/// `Unavailable`, `DeadlineExceeded`, an attempt's timeout, or tonic's lost connection (a bare
/// `Unknown`, see the module).
pub(crate) fn may_have_run(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable | Code::DeadlineExceeded => true,
        Code::Cancelled => status.reason().is_none() && timed_out(status),
        Code::Unknown => status.reason().is_none(),
        _ => false,
    }
}

/// Whether tonic's channel ended the call because its `grpc-timeout` (or the endpoint's
/// timeout) passed: its bare `Cancelled` holds a `TimeoutExpired` among its sources.
fn timed_out(status: &Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(error) = source {
        if error.is::<tonic::TimeoutExpired>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// The wait before the next attempt after `failures` failures in a row (at least 1): `first`
/// doubled per failure after the first, up to `max`, times a random 0.5 to 1 ("equal jitter").
pub(crate) fn backoff(first: Duration, failures: u32, max: Duration) -> Duration {
    let doubled = first.saturating_mul(1 << failures.saturating_sub(1).min(20));
    doubled.min(max).mul_f64(0.5 + 0.5 * unit_random())
}

/// A number in [0, 1) that differs from call to call, good enough to spread retries.
fn unit_random() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// 64 random bits, different on each call.
///
/// The standard library has no random numbers, but each `RandomState` has keys of its own (taken
/// from the system's random source once per thread, then counted up), so the hash of a value
/// under them is a fresh 64-bit value each time: a crate for random numbers would add a
/// dependency for these few uses.
fn random_u64() -> u64 {
    std::collections::hash_map::RandomState::new().hash_one(())
}

/// A random (version 4) UUID, such as `"6f1c2a4e-93d0-4b6e-8a51-0c7d2e9f4b13"`, for a
/// `request_id`. It has to be unique, not secret: the server keeps request ids per caller.
pub(crate) fn new_request_id() -> String {
    let state = std::collections::hash_map::RandomState::new();
    let mut bits = u128::from(state.hash_one(0u8)) << 64 | u128::from(state.hash_one(1u8));
    // The version (4, random) and the variant (RFC 9562) take 6 of the 128 bits.
    bits = bits & !(0xf << 76) | 0x4 << 76;
    bits = bits & !(0x3 << 62) | 0x2 << 62;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        bits >> 96,
        bits >> 80 & 0xffff,
        bits >> 64 & 0xffff,
        bits >> 48 & 0xffff,
        bits & 0xffff_ffff_ffff,
    )
}

mod sealed {
    use super::*;

    /// Keeps [`RetryRequest`] to the requests below.
    pub trait Sealed {}

    /// What a method does, which decides what is safe to try again.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// Reads: repeating one changes nothing.
        Read,
        /// Carries a `request_id`: the server answers a repeat from its memory.
        Mutation,
        /// Acts, and has no `request_id` (`SendReaction`): tried again only when it did not run.
        ActsOnce,
    }

    /// How [`call_with_retry`] calls a message's method.
    pub trait Call: prost::Message + Clone + Send + Sized + 'static {
        /// The method's response message.
        type Response;
        /// What the method does.
        const KIND: Kind;

        /// The request's `request_id`, for a mutation.
        fn request_id(&mut self) -> Option<&mut String>;

        /// Calls the method on `client`.
        fn call<T>(
            client: &mut TableServiceClient<T>,
            request: Request<Self>,
        ) -> impl Future<Output = Result<Response<Self::Response>, Status>> + Send
        where
            T: tonic::client::GrpcService<tonic::body::Body> + Send,
            T::Error: Into<StdError>,
            T::Future: Send,
            T::ResponseBody: Body<Data = Bytes> + Send + 'static,
            <T::ResponseBody as Body>::Error: Into<StdError> + Send;
    }
}

/// Implements [`RetryRequest`] for each request: its method, its response, and its kind.
macro_rules! retry_requests {
    ($($kind:ident $request:ident => $method:ident -> $response:ident;)*) => {$(
        impl sealed::Call for $request {
            type Response = $response;
            const KIND: Kind = Kind::$kind;

            fn request_id(&mut self) -> Option<&mut String> {
                retry_requests!(@request_id $kind self)
            }

            fn call<T>(
                client: &mut TableServiceClient<T>,
                request: Request<Self>,
            ) -> impl Future<Output = Result<Response<Self::Response>, Status>> + Send
            where
                T: tonic::client::GrpcService<tonic::body::Body> + Send,
                T::Error: Into<StdError>,
                T::Future: Send,
                T::ResponseBody: Body<Data = Bytes> + Send + 'static,
                <T::ResponseBody as Body>::Error: Into<StdError> + Send,
            {
                client.$method(request)
            }
        }

        impl sealed::Sealed for $request {}

        impl RetryRequest for $request {
            type Message = $request;
            type Response = $response;

            fn into_call(self) -> Request<Self> {
                Request::new(self)
            }
        }

        impl sealed::Sealed for Request<$request> {}

        impl RetryRequest for Request<$request> {
            type Message = $request;
            type Response = $response;

            fn into_call(self) -> Self {
                self
            }
        }
    )*};
    (@request_id Mutation $message:ident) => { Some(&mut $message.request_id) };
    (@request_id $kind:ident $message:ident) => { None };
}

retry_requests! {
    Read GetTableRequest => get_table -> GetTableResponse;
    Read ListTablesRequest => list_tables -> ListTablesResponse;
    Read ListPlayerTablesRequest => list_player_tables -> ListPlayerTablesResponse;
    Read SuggestMoveRequest => suggest_move -> SuggestMoveResponse;
    Mutation CreateTableRequest => create_table -> CreateTableResponse;
    Mutation DeleteTableRequest => delete_table -> DeleteTableResponse;
    Mutation JoinTableRequest => join_table -> JoinTableResponse;
    Mutation LeaveTableRequest => leave_table -> LeaveTableResponse;
    Mutation PassCardsRequest => pass_cards -> PassCardsResponse;
    Mutation PlayCardRequest => play_card -> PlayCardResponse;
    Mutation RematchTableRequest => rematch_table -> RematchTableResponse;
    Mutation QuickJoinRequest => quick_join -> QuickJoinResponse;
    ActsOnce SendReactionRequest => send_reaction -> SendReactionResponse;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};
    use tonic_types::{ErrorDetails, StatusExt};

    fn with_reason(code: Code, reason: &str) -> Status {
        let details = ErrorDetails::with_error_info(reason, "hearts.v1", HashMap::new());
        Status::with_error_details(code, "refused", details)
    }

    /// A bare `Cancelled` as tonic's channel makes it when an attempt's timeout passes.
    fn timed_out_attempt() -> Status {
        Status::from_error(Box::new(tonic::TimeoutExpired(())))
    }

    #[test]
    fn what_each_kind_of_call_tries_again() {
        use Kind::*;
        let cases = [
            // (status, read, mutation, acts once)
            (Status::unavailable("connection refused"), true, true, false),
            (with_reason(Code::Unavailable, "STORE_UNAVAILABLE"), true, true, false),
            (Status::deadline_exceeded("deadline"), true, true, false),
            (timed_out_attempt(), true, true, false),
            (Status::unknown("error reading a body from connection"), true, true, false),
            (with_reason(Code::ResourceExhausted, "OVERLOADED"), true, true, true),
            (Status::cancelled("shed by the server"), true, true, true),
            (with_reason(Code::Aborted, "CONFLICT"), false, true, false),
            (with_reason(Code::Aborted, "ETAG_MISMATCH"), false, false, false),
            (with_reason(Code::ResourceExhausted, "TOO_MANY_REACTIONS"), false, false, false),
            (with_reason(Code::ResourceExhausted, "TOO_MANY_TABLES"), false, false, false),
            (with_reason(Code::ResourceExhausted, "TOO_MANY_STREAMS"), false, false, false),
            (
                with_reason(Code::ResourceExhausted, "TOO_MANY_STREAMS_FROM_ADDRESS"),
                false,
                false,
                false,
            ),
            (Status::resource_exhausted("message too large"), false, false, false),
            (with_reason(Code::InvalidArgument, "REQUEST_ID_REUSED"), false, false, false),
            (with_reason(Code::FailedPrecondition, "NOT_YOUR_TURN"), false, false, false),
            (with_reason(Code::NotFound, "TABLE_NOT_FOUND"), false, false, false),
            (with_reason(Code::Unauthenticated, "TOKEN_INVALID"), false, false, false),
            (with_reason(Code::Internal, "INTERNAL"), false, false, false),
            (Status::internal("h2 protocol error"), false, false, false),
            // A reason says the server meant it.
            (with_reason(Code::Cancelled, "CLIENT_CLOSED"), false, false, false),
            (with_reason(Code::Unknown, "SOMETHING_NEW"), false, false, false),
        ];
        for (status, read, mutation, once) in cases {
            assert_eq!(retryable(Read, &status), read, "a read after {status:?}");
            assert_eq!(retryable(Mutation, &status), mutation, "a mutation after {status:?}");
            assert_eq!(retryable(ActsOnce, &status), once, "SendReaction after {status:?}");
        }
    }

    #[test]
    fn the_backoff_doubles_up_to_its_maximum_with_jitter() {
        let first = Duration::from_millis(200);
        let max = Duration::from_secs(5);
        for (failures, full) in [(1, 200), (2, 400), (3, 800), (5, 3200), (6, 5000), (40, 5000)] {
            let full = Duration::from_millis(full);
            for _ in 0..50 {
                let wait = backoff(first, failures, max);
                assert!(full / 2 <= wait && wait <= full, "{failures} failures: {wait:?}");
            }
        }
        // Not the same wait every time: clients that failed together spread out.
        let waits: HashSet<_> = (0..20).map(|_| backoff(first, 1, max)).collect();
        assert!(waits.len() > 10, "{waits:?}");
    }

    #[test]
    fn a_request_id_is_a_fresh_version_4_uuid() {
        let ids: HashSet<_> = (0..1000).map(|_| new_request_id()).collect();
        assert_eq!(ids.len(), 1000, "an id came twice");
        for id in &ids {
            let groups: Vec<_> = id.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
            assert!(id.chars().all(|c| c == '-' || matches!(c, '0'..='9' | 'a'..='f')), "{id}");
            assert_eq!(&id[14..15], "4", "the version of {id}");
            assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "the variant of {id}");
        }
    }

    #[test]
    fn the_default_is_three_retries_from_200_ms() {
        let options = RetryOptions::default();
        assert_eq!(options.max_retries, 3);
        assert_eq!(options.backoff, Duration::from_millis(200));
        assert_eq!((options.attempt_timeout, options.deadline), (None, None));
    }
}
