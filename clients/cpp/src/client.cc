// The hand-written part of the C++ client; see include/hearts/client.h. It must never throw.
#include "hearts/client.h"

#include <algorithm>
#include <limits>
#include <random>
#include <thread>

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

using Handler = std::function<bool(const v1::WatchTableResponse&)>;

// The longest wait between two attempts of WatchTableResumable.
constexpr std::chrono::milliseconds kLongestBackoff{10'000};

// The wait before the next attempt after `failures` (1 or more) failures in a row: `first`,
// doubled per failure after the first, at most kLongestBackoff, times 0.5 to 1 at random.
std::chrono::milliseconds Backoff(std::chrono::milliseconds first, int failures) {
  std::chrono::milliseconds delay =
      std::clamp(first, std::chrono::milliseconds(0), kLongestBackoff);
  for (int i = 1; i < failures && delay < kLongestBackoff; ++i) delay *= 2;
  delay = std::min(delay, kLongestBackoff);
  thread_local std::mt19937 random(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(delay * jitter(random));
}

// Hands `message` to `handler` unless an earlier stream of the watch delivered it, and keeps
// `last`, the last stored sequence delivered. False when the watch is over: the handler said so,
// or the table was deleted.
bool Deliver(const v1::WatchTableResponse& message, std::optional<int64_t>& last,
             const Handler& handler) {
  if (message.has_event()) {
    const v1::TableEvent::EventCase kind = message.event().event_case();
    if (kind == v1::TableEvent::kReaction || kind == v1::TableEvent::kPresenceChanged) {
      return handler(message);  // unstored: repeats the sequence before it, never sent again
    }
    if (last && message.sequence() <= *last) return true;  // delivered before the resume
    last = message.sequence();
    return handler(message) && kind != v1::TableEvent::kTableDeleted;
  }
  if (message.has_heartbeat()) return handler(message);  // the last event's sequence: not kept
  last = message.sequence();  // a snapshot: the view as of this sequence
  return handler(message);
}

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

bool IsResumable(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return true;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: {
      // No reason: a message over the size limit. The caller's own limits: not at once.
      const std::string reason = StatusDetails(status).reason();
      return !reason.empty() && reason != "TOO_MANY_REACTIONS" && reason != "TOO_MANY_TABLES" &&
             reason != "TOO_MANY_STREAMS_FROM_ADDRESS";
    }
    case grpc::StatusCode::CANCELLED:
      return StatusDetails(status).reason().empty();
    default:
      return false;
  }
}

grpc::Status WatchTableResumable(v1::TableService::StubInterface& stub, const std::string& name,
                                 const Handler& handler, const WatchOptions& options) {
  WatchCancel* const cancel = options.cancel;
  std::optional<int64_t> last = options.after_sequence;
  int failures = 0;
  for (;;) {
    v1::WatchTableRequest request;
    request.set_name(name);
    if (last) request.set_after_sequence(*last);
    if (options.heartbeat_interval) {
      const int64_t millis = options.heartbeat_interval->count();
      request.mutable_heartbeat_interval()->set_seconds(millis / 1000);
      request.mutable_heartbeat_interval()->set_nanos(
          static_cast<int32_t>(millis % 1000 * 1'000'000));
    }
    grpc::ClientContext context;  // no deadline, which would end the stream
    if (!options.token.empty()) WithToken(context, options.token);
    if (cancel != nullptr && !cancel->Attach(&context)) return grpc::Status::OK;
    // Detaches the context however this attempt ends, a handler's exception included, so that a
    // later Cancel never reaches a context that is gone.
    const auto detach = [](WatchCancel* attached) { attached->Attach(nullptr); };
    std::unique_ptr<WatchCancel, decltype(detach)> attached(cancel, detach);

    bool over = false;  // the handler or a table_deleted event ended the watch
    grpc::Status status;
    {
      const auto reader = stub.WatchTable(&context, request);
      v1::WatchTableResponse message;
      while (!over && reader->Read(&message)) {
        failures = 0;
        over = !Deliver(message, last, handler);
      }
      if (over) context.TryCancel();  // whatever the server would still send is not wanted
      status = reader->Finish();
    }
    attached.reset();
    if (over || status.ok() || (cancel != nullptr && cancel->cancelled())) {
      return grpc::Status::OK;
    }
    ++failures;
    if (!IsResumable(status) || failures > options.max_reconnects) return status;
    const std::chrono::milliseconds delay = Backoff(options.backoff, failures);
    if (cancel == nullptr) {
      std::this_thread::sleep_for(delay);
    } else if (!cancel->Wait(delay)) {
      return grpc::Status::OK;
    }
  }
}

void WatchCancel::Cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ = true;
  // Under the lock: the watch detaches the context (under it too) before the context goes.
  if (context_ != nullptr) context_->TryCancel();
  cancelled_changed_.notify_all();
}

bool WatchCancel::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

bool WatchCancel::Attach(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (context != nullptr && cancelled_) return false;
  context_ = context;
  return true;
}

bool WatchCancel::Wait(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !cancelled_changed_.wait_for(lock, duration, [this] { return cancelled_; });
}

}  // namespace hearts
