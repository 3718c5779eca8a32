// C++ client for the Hearts hearts.v1.TableService: the hand-written part.
//
// The messages (hearts/v1/*.pb.h) and the stub (hearts/v1/table_service.grpc.pb.h,
// hearts::v1::TableService::Stub) are generated at build time from proto/hearts/v1/*.proto by
// the installed protoc and grpc_cpp_plugin. This header adds what every client needs beside them:
// a channel with keepalive, the seat token as metadata, the reason of a refused call, and card
// notation.
//
// Nothing here throws or aborts: Unreal Engine and many game engines build without exceptions, so
// a failure is an empty std::optional or a grpc::Status.
#ifndef HEARTS_CLIENT_H_
#define HEARTS_CLIENT_H_

#include <chrono>
#include <memory>
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

}  // namespace hearts

#endif  // HEARTS_CLIENT_H_
