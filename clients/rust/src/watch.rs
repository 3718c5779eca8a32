//! A table's stream that resumes by itself, as docs/guide.md ("Disconnects") asks of every
//! client: the one loop each app would otherwise write around `watch_table`, with the same
//! semantics as the TypeScript client's `watchTableResumable` and the Python client's `watch`.
//!
//! It never spawns a task: all of it runs while the caller polls, so a dropped stream leaves
//! nothing behind, and the call ends with it.
//!
//! Which errors are resumed is the TypeScript client's rule plus one for tonic: a bare `Unknown`
//! (no `ErrorInfo`). tonic 0.14, built as a client only, reports a connection that broke under a
//! stream, reset or found dead by keepalive, as `Unknown` ("error reading a body from
//! connection"); the server always answers with a reason (its unexpected errors are `INTERNAL`).
//! Without that rule the helper would resume only what the server itself ends, never the
//! dropped connection it exists for.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::stream::{self, FusedStream, Stream, StreamExt};
use tonic::codec::Streaming;
use tonic::codegen::{Body, Bytes, StdError};
use tonic::{Code, Request, Status};

use crate::retry::{backoff, may_have_run, not_run};
use crate::v1::table_event::Event;
use crate::v1::watch_table_response::Kind;
use crate::v1::{TableEvent, WatchTableRequest, WatchTableResponse};
use crate::{BearerToken, StatusDetails, TableServiceClient};

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// `RESOURCE_EXHAUSTED` reasons that are the caller's own limits: trying again at once does not
/// help. Without a reason, the status is gRPC's own refusal of a message over the size limit.
const NOT_NOW: [&str; 3] =
    ["TOO_MANY_REACTIONS", "TOO_MANY_TABLES", "TOO_MANY_STREAMS_FROM_ADDRESS"];

/// How [`watch_table_resumable`] watches: `WatchOptions::default()` is a spectator's watch with
/// the default retries; set fields with `..WatchOptions::default()` for the rest.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// The seat's token, sent as `authorization` metadata with every attempt, for the seat's own
    /// view and private events. `None`: a spectator's view, or a client whose interceptor adds
    /// the token.
    pub token: Option<BearerToken>,
    /// How many failed attempts in a row are tried again; the next failure ends the stream with
    /// its error (default 5). A message that arrives resets the count.
    pub max_reconnects: u32,
    /// The wait before the first new attempt, doubled for each further failure in a row up to
    /// 10 s; each wait is taken at random between half of it and all of it (default 200 ms).
    pub backoff: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions { token: None, max_reconnects: 5, backoff: Duration::from_millis(200) }
    }
}

/// Watches a table as `client.watch_table(request)` does, and opens the stream again when it
/// fails because the server or the network did, so that the caller sees every message once, in
/// order, across dropped connections and server restarts.
///
/// `request` is the first attempt's: its `name`, `after_sequence` (unset: a snapshot first) and
/// `heartbeat_interval`. After a failure that resuming can mend, and a backoff (see
/// [`WatchOptions`]), the next attempt sends the same request with `after_sequence` set to the
/// last stored sequence delivered: a snapshot's or a stored event's. Stored events at or below
/// it are skipped, should a stream send them again. A reaction, a presence change and a
/// heartbeat are passed on as they come: they repeat the sequence of the event before them, and
/// a resumed stream never sends them again. A resumed stream may start with a new snapshot (the
/// server no longer held the events missed): take it as the current state.
///
/// Resumed: `Unavailable`, `DeadlineExceeded`, `ResourceExhausted` with a reason other than the
/// caller's own limits (`TOO_MANY_REACTIONS`, `TOO_MANY_TABLES`,
/// `TOO_MANY_STREAMS_FROM_ADDRESS`), and a bare `Cancelled` or `Unknown` (no reason: the server
/// shed the call, or tonic lost the connection). Any other error, or the failure after
/// `max_reconnects` failed attempts in a row, is yielded, and the stream ends after it.
///
/// The stream also ends (`None`) after a `table_deleted` event, or when the server ends it.
/// Drop it to hang up: the call ends at once, and nothing is yielded. No attempt has a deadline.
/// A channel's `Endpoint::timeout` bounds only the wait for each attempt's response headers,
/// which the server sends at once, not the stream.
pub fn watch_table_resumable<T>(
    client: TableServiceClient<T>,
    request: WatchTableRequest,
    options: WatchOptions,
) -> ResumableWatch
where
    T: tonic::client::GrpcService<tonic::body::Body> + Send + 'static,
    T::Error: Into<StdError>,
    T::Future: Send,
    T::ResponseBody: Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as Body>::Error: Into<StdError> + Send,
{
    let watch = Watch { client, request, options, stream: None, failures: 0, done: false };
    // Fused: polled again after its end it stays ended (`None`), as tonic's `Streaming` does,
    // where an unfold would panic.
    ResumableWatch { inner: Box::pin(stream::unfold(watch, Watch::next).fuse()) }
}

/// The stream of [`watch_table_resumable`]: a [`Stream`] of
/// `Result<WatchTableResponse, Status>`, or read it with [`message`](Self::message) as a tonic
/// `Streaming`.
pub struct ResumableWatch {
    inner: Pin<Box<dyn FusedStream<Item = Result<WatchTableResponse, Status>> + Send>>,
}

impl ResumableWatch {
    /// The next message, `Ok(None)` once the stream has ended, or the error that ended it.
    ///
    /// Cancel-safe: a `tokio::select!` that drops this future loses no message.
    pub async fn message(&mut self) -> Result<Option<WatchTableResponse>, Status> {
        std::future::poll_fn(|cx| self.inner.as_mut().poll_next(cx)).await.transpose()
    }
}

impl Stream for ResumableWatch {
    type Item = Result<WatchTableResponse, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl FusedStream for ResumableWatch {
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}

impl fmt::Debug for ResumableWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResumableWatch").finish_non_exhaustive()
    }
}

/// The state between two messages of a [`ResumableWatch`].
struct Watch<T> {
    client: TableServiceClient<T>,
    /// The next attempt's request: `after_sequence` is the last stored sequence delivered.
    request: WatchTableRequest,
    options: WatchOptions,
    /// The open stream; `None` before the first attempt and after a failure.
    stream: Option<Streaming<WatchTableResponse>>,
    /// Failed attempts since the last message.
    failures: u32,
    /// Set once the last item (a `table_deleted` event or an error) has been yielded.
    done: bool,
}

impl<T> Watch<T>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<StdError>,
    T::ResponseBody: Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as Body>::Error: Into<StdError> + Send,
{
    /// The next item and the state after it, for `stream::unfold`.
    async fn next(mut self) -> Option<(Result<WatchTableResponse, Status>, Self)> {
        if self.done {
            return None;
        }
        loop {
            let mut stream = match self.stream.take() {
                Some(stream) => stream,
                None => match self.open().await {
                    Ok(stream) => stream,
                    Err(status) => match self.failed(status) {
                        Some(error) => return Some((Err(error), self)),
                        None => continue,
                    },
                },
            };
            let message = match stream.message().await {
                Ok(Some(message)) => message,
                Ok(None) => return None, // the server ended the stream
                Err(status) => match self.failed(status) {
                    Some(error) => return Some((Err(error), self)),
                    None => continue,
                },
            };
            self.failures = 0;
            match self.deliver(&message) {
                Delivery::Skip => self.stream = Some(stream),
                Delivery::Yield => {
                    self.stream = Some(stream);
                    return Some((Ok(message), self));
                }
                Delivery::Last => {
                    self.done = true; // the stream is dropped: the call ends here
                    return Some((Ok(message), self));
                }
            }
        }
    }

    /// Opens the stream, after the backoff if the attempt before failed.
    async fn open(&mut self) -> Result<Streaming<WatchTableResponse>, Status> {
        if self.failures > 0 {
            tokio::time::sleep(backoff(self.options.backoff, self.failures, MAX_BACKOFF)).await;
        }
        let request = match &self.options.token {
            Some(token) => token.request(self.request.clone()),
            None => Request::new(self.request.clone()),
        };
        Ok(self.client.watch_table(request).await?.into_inner())
    }

    /// Counts a failed attempt; the error if it is to end the stream.
    fn failed(&mut self, status: Status) -> Option<Status> {
        self.failures += 1;
        if resumable(&status) && self.failures <= self.options.max_reconnects {
            return None;
        }
        self.done = true;
        Some(status)
    }

    /// What to do with `message`, and the last stored sequence after it.
    fn deliver(&mut self, message: &WatchTableResponse) -> Delivery {
        let last = &mut self.request.after_sequence;
        let event = match &message.kind {
            Some(Kind::Event(TableEvent { event, .. })) => event,
            // The sequence of the last event: nothing to keep.
            Some(Kind::Heartbeat(_)) => return Delivery::Yield,
            // The view as of its sequence, which may be below the last one delivered: a server
            // that lost writes (a Redis restored or failed over) numbers its events from there,
            // and skipping up to the old number would hide them.
            Some(Kind::Snapshot(_)) => {
                *last = Some(message.sequence);
                return Delivery::Yield;
            }
            // A kind this client does not know: passed on, nothing kept (as the Go and Kotlin
            // clients do); a resumed stream may send it again.
            None => return Delivery::Yield,
        };
        match event {
            // Unstored: it repeats the sequence before it, and no stream sends it again.
            Some(Event::Reaction(_) | Event::PresenceChanged(_)) => Delivery::Yield,
            _ if last.is_some_and(|last| message.sequence <= last) => Delivery::Skip,
            Some(Event::TableDeleted(_)) => {
                *last = Some(message.sequence);
                Delivery::Last
            }
            _ => {
                *last = Some(message.sequence);
                Delivery::Yield
            }
        }
    }
}

/// What [`Watch::deliver`] decides for a message.
enum Delivery {
    /// Delivered before (a resumed stream sent it again).
    Skip,
    Yield,
    /// Yield it, then end: the table is gone.
    Last,
}

/// Whether a failed attempt may be made again: the server or the network failed, not the
/// request. The unary calls' rule (see `retry.rs`), and a `ResourceExhausted` whose reason is a
/// limit of the server's (`TOO_MANY_STREAMS`: another replica may have room), not the caller's.
fn resumable(status: &Status) -> bool {
    let server_limit = status.code() == Code::ResourceExhausted
        && status.reason().is_some_and(|reason| !NOT_NOW.contains(&&*reason));
    // The caller hangs up by dropping the stream, which is never seen here: a bare `Cancelled`
    // is the server's.
    may_have_run(status) || not_run(status) || server_limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use tonic_types::{ErrorDetails, StatusExt};

    fn with_reason(code: Code, reason: &str) -> Status {
        let details = ErrorDetails::with_error_info(reason, "hearts.v1", HashMap::new());
        Status::with_error_details(code, "refused", details)
    }

    #[test]
    fn a_failure_of_the_server_or_the_network_is_resumed() {
        for status in [
            Status::unavailable("connection refused"),
            with_reason(Code::Unavailable, "SHUTTING_DOWN"),
            with_reason(Code::Unavailable, "STREAM_LAGGED"),
            Status::deadline_exceeded("deadline"),
            with_reason(Code::ResourceExhausted, "TOO_MANY_STREAMS"),
            with_reason(Code::ResourceExhausted, "OVERLOADED"),
            Status::cancelled("shed by the server"),
            Status::unknown("error reading a body from connection"),
        ] {
            assert!(resumable(&status), "{status:?}");
        }
    }

    #[test]
    fn a_refused_request_is_not_resumed() {
        for status in [
            with_reason(Code::NotFound, "TABLE_NOT_FOUND"),
            with_reason(Code::Unauthenticated, "TOKEN_REVOKED"),
            with_reason(Code::PermissionDenied, "WRONG_TABLE"),
            with_reason(Code::InvalidArgument, "INVALID_TABLE_NAME"),
            with_reason(Code::Internal, "INTERNAL"),
            Status::internal("h2 protocol error"),
            // The caller's own limits, and a message over the size limit (no reason).
            with_reason(Code::ResourceExhausted, "TOO_MANY_STREAMS_FROM_ADDRESS"),
            with_reason(Code::ResourceExhausted, "TOO_MANY_TABLES"),
            with_reason(Code::ResourceExhausted, "TOO_MANY_REACTIONS"),
            Status::resource_exhausted("message too large"),
            // A reason says the server meant it.
            with_reason(Code::Cancelled, "CLIENT_CLOSED"),
            with_reason(Code::Unknown, "SOMETHING_NEW"),
        ] {
            assert!(!resumable(&status), "{status:?}");
        }
    }
}
