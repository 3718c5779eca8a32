//! Rust client for the Hearts `hearts.v1.TableService`.
//!
//! - [`v1`]: the Protobuf messages (prost) and the gRPC client [`TableServiceClient`] (tonic),
//!   generated from `proto/hearts/v1/*.proto` by `scripts/generate-rust.sh` into `src/gen`; do
//!   not edit them.
//! - [`connect`] and [`endpoint`]: a client for `host:port` or a URI.
//! - [`BearerToken`]: the `authorization` metadata that carries a seat or creator token.
//! - Card notation: [`v1::Card`] parses from and prints as `"QS"`, `"TD"`, `"2C"`.
//! - [`StatusDetails`]: the stable reason (`google.rpc.ErrorInfo`) and the
//!   [`MoveRejection`](v1::MoveRejection) of a refused call.
//! - [`watch_table_resumable`]: a table's stream that resumes by itself after a dropped
//!   connection or a server restart, without a gap or a repeat.
//! - [`call_with_retry`]: a unary call, tried again after a failure of the server or the network
//!   when that cannot make it act twice.
//!
//! `README.md` has an example; `docs/api.md` in the repository describes the API.

/// The generated `hearts.v1` messages and the `TableService` client.
// `WatchTableResponse.kind` holds a whole TableView or an event, unboxed, as prost generates it.
#[allow(clippy::large_enum_variant)]
pub mod v1 {
    include!("gen/hearts.v1.rs");
}

mod auth;
mod cards;
mod details;
mod retry;
mod watch;

pub use auth::BearerToken;
pub use cards::ParseCardError;
pub use details::StatusDetails;
pub use retry::{RetryOptions, RetryRequest, call_with_retry};
/// The generated client; [`connect`] makes one.
pub use v1::table_service_client::TableServiceClient;
pub use watch::{ResumableWatch, WatchOptions, watch_table_resumable};

/// `google.rpc.ErrorInfo`, as [`StatusDetails::error_info`] returns it.
pub use tonic_types::ErrorInfo;
/// The crates of the generated code's types, at the versions this crate uses.
pub use {prost, prost_types, tonic};

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

/// How long a connection with an open call may be silent before the client pings the server.
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(60);
/// How long the client waits for a ping's answer before it drops the connection.
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// The endpoint of a server at `address`: `host:port` (plain HTTP/2) or a URI
/// (`http://host:port`). Set timeouts and the like on it, then `connect()` and hand the channel
/// to [`TableServiceClient::new`].
///
/// Keepalive is on: while a call is open (a `watch_table` stream, say), a connection silent for
/// 60 s gets an HTTP/2 ping, and one whose answer takes over 20 s is dropped. A stream on a
/// connection that died without a word (a NAT entry dropped, a laptop slept) then ends with an
/// error within about 80 s instead of hanging (tonic 0.14 makes it a bare `Unknown`, "error
/// reading a body from connection"); watch again with `after_sequence` to resume. Change both
/// with `http2_keep_alive_interval` and `keep_alive_timeout` on the returned endpoint, but keep
/// the interval at 10 s or more: the server sends a client that pings more often away (GOAWAY
/// `too_many_pings`). An idle connection is not pinged.
///
/// An `https://` URI needs TLS, which this crate leaves out: enable tonic's `tls-ring` and
/// `tls-native-roots` features in your own `Cargo.toml`, and such an endpoint uses TLS with the
/// system's roots.
pub fn endpoint(address: &str) -> Result<Endpoint, tonic::transport::Error> {
    let uri =
        if address.contains("://") { address.to_owned() } else { format!("http://{address}") };
    // Endpoint::new, as the generated `TableServiceClient::connect` uses: with a TLS feature on,
    // it configures TLS for https URIs.
    Ok(Endpoint::new(uri)?
        .http2_keep_alive_interval(KEEP_ALIVE_INTERVAL)
        .keep_alive_timeout(KEEP_ALIVE_TIMEOUT))
}

/// Connects to the server at `address` (see [`endpoint`]).
pub async fn connect(
    address: &str,
) -> Result<TableServiceClient<Channel>, tonic::transport::Error> {
    Ok(TableServiceClient::new(endpoint(address)?.connect().await?))
}

// The README's example, compiled as a doc test (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
