// The hand-written part of the C++ client; see include/hearts/client.h. It must never throw.
#include "hearts/client.h"

#include <algorithm>
#include <limits>

#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "google/rpc/status.pb.h"

namespace hearts {
namespace {

constexpr char kDomain[] = "hearts.v1";
constexpr char kRanks[] = "23456789TJQKA";  // RANK_TWO (2) to RANK_ACE (14)
constexpr char kSuits[] = "CDHS";           // SUIT_CLUBS (1) to SUIT_SPADES (4)

// gRPC takes milliseconds in an int: longer is "never" to it anyway, so longer is INT_MAX.
int Millis(std::chrono::milliseconds duration) {
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(
      duration.count(), 0, std::numeric_limits<int>::max()));
}

char Upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

}  // namespace

grpc::ChannelArguments ChannelArguments(const Keepalive& keepalive) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, Millis(keepalive.time));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, Millis(keepalive.timeout));
  // Newer C-core (grpcio 1.85's, for one) waits for any ping's answer as long as this says (60 s
  // by default), whatever the keepalive timeout says; 1.51 (Debian 12's) heeds the latter alone.
  args.SetInt("grpc.http2.ping_timeout_ms", Millis(keepalive.timeout));
  // No pings while no call is open: an idle channel costs the server nothing.
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  // C-core sends at most this many pings (2 by default) until the client sends data, and a
  // WatchTable stream sends none after its request: a stream quiet for longer than two pings
  // would never find out that its connection died. 0 lifts the limit (the server accepts a ping
  // every 10 s).
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  return args;
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           const Keepalive& keepalive) {
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   ChannelArguments(keepalive));
}

bool WithToken(grpc::ClientContext& context, std::string_view token) {
  // gRPC aborts the process on a call whose metadata holds a byte a header value may not (a
  // line break left over from a token file, say): such a token is never sent.
  for (const char c : token) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  context.AddMetadata("authorization", "Bearer " + std::string(token));
  return true;
}

StatusDetails::StatusDetails(const grpc::Status& status) {
  google::rpc::Status details;
  if (status.ok() || status.error_details().empty() ||
      !details.ParseFromString(status.error_details())) {
    return;
  }
  for (const google::protobuf::Any& any : details.details()) {
    if (!error_info_ && any.Is<google::rpc::ErrorInfo>()) {
      google::rpc::ErrorInfo info;
      if (any.UnpackTo(&info) && info.domain() == kDomain) error_info_ = std::move(info);
    } else if (!move_rejection_ && any.Is<v1::MoveRejection>()) {
      v1::MoveRejection rejection;
      if (any.UnpackTo(&rejection)) move_rejection_ = std::move(rejection);
    }
  }
}

const std::string& StatusDetails::reason() const {
  static const std::string kNone;
  return error_info_ ? error_info_->reason() : kNone;
}

std::string FormatCard(const v1::Card& card) {
  const int rank = card.rank();
  const int suit = card.suit();
  if (rank < v1::RANK_TWO || rank > v1::RANK_ACE || suit < v1::SUIT_CLUBS ||
      suit > v1::SUIT_SPADES) {
    return "?" + std::to_string(suit) + "/" + std::to_string(rank);
  }
  return {kRanks[rank - v1::RANK_TWO], kSuits[suit - v1::SUIT_CLUBS]};
}

std::optional<v1::Card> ParseCard(std::string_view text) {
  char rank_letter = 0;
  if (text.size() == 3 && text.substr(0, 2) == "10") {
    rank_letter = 'T';
    text.remove_prefix(2);
  } else if (text.size() == 2) {
    rank_letter = Upper(text[0]);
    text.remove_prefix(1);
  } else {
    return std::nullopt;
  }
  const std::string_view ranks(kRanks);
  const std::string_view suits(kSuits);
  const size_t rank = ranks.find(rank_letter);
  const size_t suit = suits.find(Upper(text[0]));
  if (rank == std::string_view::npos || suit == std::string_view::npos) return std::nullopt;
  v1::Card card;
  card.set_rank(static_cast<v1::Rank>(v1::RANK_TWO + rank));
  card.set_suit(static_cast<v1::Suit>(v1::SUIT_CLUBS + suit));
  return card;
}

bool SameCard(const v1::Card& a, const v1::Card& b) {
  return a.suit() == b.suit() && a.rank() == b.rank();
}

}  // namespace hearts
