// C++ client for the Hearts hearts.v1.TableService: the hand-written part.
//
// The messages (hearts/v1/*.pb.h) and the stub (hearts/v1/table_service.grpc.pb.h,
// hearts::v1::TableService::Stub) are generated at build time from proto/hearts/v1/*.proto by
// the installed protoc and grpc_cpp_plugin. This header adds what every client needs beside them:
// a channel with keepalive, the seat token as metadata, the reason of a refused call, card
// notation, and a watch stream that resumes by itself.
//
// Nothing here throws or aborts: Unreal Engine and many game engines build without exceptions, so
// a failure is an empty std::optional or a grpc::Status.
#ifndef HEARTS_CLIENT_H_
#define HEARTS_CLIENT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/status.h>

#include "google/rpc/error_details.pb.h"
#include "hearts/v1/error_details.pb.h"
#include "hearts/v1/table.pb.h"
#include "hearts/v1/table_service.grpc.pb.h"

namespace hearts {

// Keepalive pings on a connection with an open call (a WatchTable stream, say). A connection that
// died without a word (a NAT entry dropped, a laptop asleep) is then found out within time +
// timeout, and its calls fail with UNAVAILABLE, instead of a stream that waits forever. The
// server refuses pings more often than every 10 s without data (it answers GOAWAY
// "too_many_pings"): keep `time` at 10 s or more.
struct Keepalive {
  // How long the connection may be silent before the client pings.
  std::chrono::milliseconds time{60'000};
  // How long the client waits for the ping's answer before it drops the connection.
  std::chrono::milliseconds timeout{20'000};
};

// The channel arguments MakeChannel uses: those of `keepalive`, nothing else. Add your own and pass
// them to grpc::CreateCustomChannel (for TLS, with grpc::SslCredentials).
grpc::ChannelArguments ChannelArguments(const Keepalive& keepalive = {});

// A plaintext (no TLS) channel to the server at `address`, "host:port", with keepalive.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           const Keepalive& keepalive = {});

// Sends `token` (a seat or creator token) with the call as "authorization: Bearer <token>".
// False, and nothing added, for a token with a byte outside printable ASCII (a trailing line
// break, say), which gRPC would not send but abort the process for; the call then goes without
// it, and a call that needs a token is refused (TOKEN_MISSING).
bool WithToken(grpc::ClientContext& context, std::string_view token);

// The details of a failed call, read from its status's error_details (the
// grpc-status-details-bin trailer, a serialized google.rpc.Status). Every error of the server
// carries a google.rpc.ErrorInfo of domain "hearts.v1" with a stable reason such as
// "MUST_FOLLOW_SUIT"; a refused PassCards or PlayCard also a hearts.v1.MoveRejection. A status
// without them (one gRPC made itself: UNAVAILABLE, DEADLINE_EXCEEDED, a bare CANCELLED) has
// neither.
class StatusDetails {
 public:
  explicit StatusDetails(const grpc::Status& status);

  // The ErrorInfo's reason, such as "CARD_NOT_IN_HAND"; empty when there is none.
  const std::string& reason() const;
  // The ErrorInfo of domain "hearts.v1"; its metadata "table" names the table, where one applies.
  const std::optional<google::rpc::ErrorInfo>& error_info() const { return error_info_; }
  // The MoveRejection of a refused move: the reason, the caller's legal cards now, and how many
  // cards it must pass.
  const std::optional<v1::MoveRejection>& move_rejection() const { return move_rejection_; }

 private:
  std::optional<google::rpc::ErrorInfo> error_info_;
  std::optional<v1::MoveRejection> move_rejection_;
};

// Card notation: rank then suit, ranks 2-9, T, J, Q, K, A and suits C, D, H, S ("2C", "TD",
// "QS"). FormatCard writes a card that names no card (an unset or unknown suit or rank) as
// "?suit/rank" with the numbers.
std::string FormatCard(const v1::Card& card);
// Reads "QS", "td", "2C", and "10H" for "TH"; std::nullopt for anything else.
std::optional<v1::Card> ParseCard(std::string_view text);
// Two cards are equal when their suits and ranks are.
bool SameCard(const v1::Card& a, const v1::Card& b);

// ----------------------------------------------------------------------------- watching

class WatchCancel;

// How WatchTableResumable watches.
struct WatchOptions {
  // Deliver only what follows this sequence (the last one the app has); unset: a snapshot first.
  std::optional<int64_t> after_sequence;
  // The seat token, sent with every attempt: the seat's own view and private events. Empty: a
  // spectator's stream. A token WithToken refuses goes unsent, and the server's refusal
  // (TOKEN_MISSING) comes back.
  std::string token;
  // Ask for a heartbeat whenever the stream has been quiet this long (5 s to 10 min); unset: none.
  std::optional<std::chrono::milliseconds> heartbeat_interval;
  // How many attempts that failed in a row are followed by another: the failure after that many
  // is returned.
  int max_reconnects = 5;
  // The first wait before a new attempt, doubled per failure in a row up to 10 s; each wait is
  // 0.5 to 1 times that, at random, so that clients cut together do not come back together.
  std::chrono::milliseconds backoff{200};
  // Ends the watch from another thread (it must outlive the call, and serve one watch at a
  // time: two watches sharing one would each take it over from the other); none: only the
  // handler can.
  WatchCancel* cancel = nullptr;
};

// Whether WatchTableResumable opens a stream that ended with `status` again: the server or the
// network failed, not the request. UNAVAILABLE and DEADLINE_EXCEEDED; RESOURCE_EXHAUSTED with a
// reason other than the caller's own limits (TOO_MANY_REACTIONS, TOO_MANY_TABLES,
// TOO_MANY_STREAMS_FROM_ADDRESS; without one the message was over the size limit); and a bare
// CANCELLED, the server shedding the call (one the caller caused ends the watch before this is
// asked).
bool IsResumable(const grpc::Status& status);

// Watches the table `name` (tables/...) on `stub` and calls `handler` with every message, on the
// calling thread, until the handler returns false, a table_deleted event has been handled, the
// server ends the stream, options.cancel is cancelled, or an error that is not resumable
// (IsResumable) comes, or one that is comes max_reconnects + 1 times in a row. It returns the
// last error, or OK in every other case.
//
// This is the loop docs/guide.md ("Disconnects") asks of every client. After a resumable error
// the stream is opened again, after a backoff (WatchOptions::backoff), with after_sequence set to
// the last snapshot or stored event delivered; a message resets the count of failures in a row.
// Stored events a resumed stream sends again are skipped, so the handler sees no gap and no
// repeat. A reaction, a presence change or a heartbeat repeats the sequence of the event before it
// and a resumed stream never sends it again, so it is passed on as it comes. A resumed stream may
// start with a new snapshot (the server no longer holds the missed events): take it as the state
// of the table. A stream has no deadline: it runs as long as the table is watched. An exception
// the handler throws ends the watch and passes through.
grpc::Status WatchTableResumable(v1::TableService::StubInterface& stub, const std::string& name,
                                 const std::function<bool(const v1::WatchTableResponse&)>& handler,
                                 const WatchOptions& options = {});

// Ends a WatchTableResumable from another thread: the open attempt's call is cancelled
// (ClientContext::TryCancel), a wait before the next attempt ends at once, and the watch returns
// OK. Cancelling before the watch starts keeps it from opening any stream; a cancel is final.
// One per watch: give each concurrent watch its own.
class WatchCancel {
 public:
  WatchCancel() = default;
  WatchCancel(const WatchCancel&) = delete;
  WatchCancel& operator=(const WatchCancel&) = delete;

  // Safe from any thread, any number of times.
  void Cancel();
  bool cancelled() const;

 private:
  friend grpc::Status WatchTableResumable(
      v1::TableService::StubInterface& stub, const std::string& name,
      const std::function<bool(const v1::WatchTableResponse&)>& handler,
      const WatchOptions& options);

  // Makes `context` the one Cancel cancels; false, and nothing set, once cancelled. nullptr (the
  // call is over, its context about to go) always succeeds.
  bool Attach(grpc::ClientContext* context);
  // Waits `duration`, or less if Cancel is called; false when it was.
  bool Wait(std::chrono::milliseconds duration);

  mutable std::mutex mutex_;
  std::condition_variable cancelled_changed_;
  bool cancelled_ = false;
  grpc::ClientContext* context_ = nullptr;
};

}  // namespace hearts

#endif  // HEARTS_CLIENT_H_
