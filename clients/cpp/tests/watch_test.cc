// hearts::WatchTableResumable against a live server: a stream cut twice while the game goes on
// resumes to the same stored events an uncut stream shows, without gaps or repeats, asking for
// the right after_sequence each time; a refused stream is not opened again; a cancel, the
// handler or the table's deletion ends the watch without an error; heartbeats are asked for and
// passed on. Without a server (a port nobody listens on): the reconnects stop at max_reconnects,
// each wait longer than the one before, and a cancel cuts the wait short.
//
// The streams are cut by a client interceptor on the watch's channel: after the number of
// messages the test gives, it cancels the call and turns the CANCELLED it ends with into
// UNAVAILABLE, as when a connection drops. It records each stream's request and what it
// received, to compare with what the watch delivered, and it can make a resumed stream ask for
// events from earlier than the watch did: the server never sends a stored event at or below
// after_sequence, so only then does the watch meet one to skip.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>
#include <gtest/gtest.h>

#include "hearts/client.h"
#include "live_server.h"

namespace hearts_test {
namespace {

using hearts::v1::TableEvent;
using hearts::v1::WatchTableResponse;
using Stub = hearts::v1::TableService::Stub;
using std::chrono::milliseconds;

constexpr char kWatchTable[] = "/hearts.v1.TableService/WatchTable";

// Whether `message` is a snapshot or a stored event: not a reaction, presence change or heartbeat.
bool Stored(const WatchTableResponse& message) {
  if (message.has_heartbeat()) return false;
  if (!message.has_event()) return true;
  const auto kind = message.event().event_case();
  return kind != TableEvent::kReaction && kind != TableEvent::kPresenceChanged;
}

bool Presence(const WatchTableResponse& message) {
  return message.has_event() && message.event().has_presence_changed();
}

// What the cutting channel did to its WatchTable streams, in the order they were opened.
class StreamLog {
 public:
  // Stream i fails after cuts[i] messages (1 or more); the streams after those are left alone. A
  // stream opened with an after_sequence after the first asks the server for `rewind` sequences
  // earlier, so that the server sends again stored events the watch delivered before.
  explicit StreamLog(std::vector<int> cuts = {}, int64_t rewind = 0)
      : cuts_(std::move(cuts)), rewind_(rewind) {}

  struct Stream {
    Clock::time_point opened;
    int64_t after_sequence = -1;  // as the watch asked; -1: unset
    google::protobuf::Duration heartbeat_interval;
    int cut = 0;                  // fails after this many messages; 0: never
    int received = 0;
    int presence = 0;             // presence changes received
    int replayed = 0;             // stored messages at or below after_sequence received
    int64_t last_stored = -1;     // the highest stored sequence received; -1: none
    bool ended = false;
  };

  std::vector<Stream> streams() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return streams_;
  }

  // Waits up to `wait` for `done(streams)` to hold; whether it did.
  bool WaitFor(const std::function<bool(const std::vector<Stream>&)>& done,
               Clock::duration wait = kWait) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, wait, [&] { return done(streams_); });
  }

  // Records a stream opened with `request`; its index, and the after_sequence to ask instead
  // (nullopt: the request's own).
  std::pair<size_t, std::optional<int64_t>> Open(const hearts::v1::WatchTableRequest& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    Stream stream;
    stream.opened = Clock::now();
    if (request.has_after_sequence()) stream.after_sequence = request.after_sequence();
    stream.heartbeat_interval = request.heartbeat_interval();
    if (streams_.size() < cuts_.size()) stream.cut = cuts_[streams_.size()];
    std::optional<int64_t> rewound;
    if (!streams_.empty() && rewind_ > 0 && request.has_after_sequence()) {
      rewound = std::max<int64_t>(0, request.after_sequence() - rewind_);
    }
    streams_.push_back(stream);
    changed_.notify_all();
    return {streams_.size() - 1, rewound};
  }

  // Records a message of stream `index`; whether the stream is to fail now.
  bool Received(size_t index, const WatchTableResponse& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    Stream& stream = streams_[index];
    ++stream.received;
    if (Presence(message)) ++stream.presence;
    if (Stored(message)) {
      if (message.sequence() <= stream.after_sequence) ++stream.replayed;
      stream.last_stored = std::max(stream.last_stored, message.sequence());
    }
    changed_.notify_all();
    return stream.received == stream.cut;
  }

  void Ended(size_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_[index].ended = true;
    changed_.notify_all();
  }

 private:
  const std::vector<int> cuts_;
  const int64_t rewind_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Stream> streams_;
};

// The interceptor of one WatchTable call; see the file's comment.
class CuttingInterceptor : public grpc::experimental::Interceptor {
 public:
  CuttingInterceptor(grpc::experimental::ClientRpcInfo* info, std::shared_ptr<StreamLog> log)
      : info_(info), log_(std::move(log)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using Hook = grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(Hook::PRE_SEND_MESSAGE)) {
      const auto* request =
          static_cast<const hearts::v1::WatchTableRequest*>(methods->GetSendMessage());
      if (request == nullptr) {
        ADD_FAILURE() << "the interceptor cannot read the WatchTableRequest";
      } else {
        const auto [index, rewound] = log_->Open(*request);
        index_ = index;
        if (rewound) {
          rewound_ = *request;  // must live until it is sent
          rewound_.set_after_sequence(*rewound);
          methods->ModifySendMessage(&rewound_);
        }
      }
    }
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_MESSAGE) && index_) {
      const auto* message = static_cast<const WatchTableResponse*>(methods->GetRecvMessage());
      // This message still reaches the reader; the next Read fails.
      if (message != nullptr && log_->Received(*index_, *message)) {
        cut_ = true;
        info_->client_context()->TryCancel();
      }
    }
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_STATUS) && index_) {
      if (cut_) {
        *methods->GetRecvStatus() =
            grpc::Status(grpc::StatusCode::UNAVAILABLE, "the connection dropped (test)");
      }
      log_->Ended(*index_);
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ClientRpcInfo* info_;
  std::shared_ptr<StreamLog> log_;
  std::optional<size_t> index_;
  hearts::v1::WatchTableRequest rewound_;
  bool cut_ = false;
};

class CuttingFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit CuttingFactory(std::shared_ptr<StreamLog> log) : log_(std::move(log)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    if (std::string(info->method()) != kWatchTable) return nullptr;
    return new CuttingInterceptor(info, log_);
  }

 private:
  std::shared_ptr<StreamLog> log_;
};

// A stub on a channel to `address` (with MakeChannel's arguments) whose WatchTable streams
// `log` records and cuts.
std::unique_ptr<Stub> CuttingStub(const std::string& address, std::shared_ptr<StreamLog> log) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<CuttingFactory>(std::move(log)));
  return hearts::v1::TableService::NewStub(grpc::experimental::CreateCustomChannelWithInterceptors(
      address, grpc::InsecureChannelCredentials(), hearts::ChannelArguments(),
      std::move(factories)));
}

// A loopback address where nothing listens: a port the kernel gave out and that was closed again.
std::string DeadAddress() {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ADD_FAILURE() << "no free port";
  }
  close(listener);
  return "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
}

// WatchTableResumable run on a thread of its own, keeping what it delivers. The handler returns
// `keep_going(message)` (true when none is given). The destructor cancels the watch and waits for
// it.
class BackgroundWatch {
 public:
  BackgroundWatch(Stub& stub, std::string name, hearts::WatchOptions options,
                  std::function<bool(const WatchTableResponse&)> keep_going = nullptr)
      : keep_going_(std::move(keep_going)) {
    options.cancel = &cancel_;
    thread_ = std::thread([this, &stub, name = std::move(name), options] {
      const grpc::Status status = hearts::WatchTableResumable(
          stub, name,
          [this](const WatchTableResponse& message) {
            std::lock_guard<std::mutex> lock(mutex_);
            delivered_.push_back(message);
            changed_.notify_all();
            return !keep_going_ || keep_going_(message);
          },
          options);
      std::lock_guard<std::mutex> lock(mutex_);
      status_ = status;
      changed_.notify_all();
    });
  }

  ~BackgroundWatch() {
    cancel_.Cancel();
    thread_.join();
  }

  BackgroundWatch(const BackgroundWatch&) = delete;
  BackgroundWatch& operator=(const BackgroundWatch&) = delete;

  hearts::WatchCancel& cancel() { return cancel_; }

  // Waits up to `wait` for a stored message numbered `sequence` or more; whether one came.
  bool WaitForStored(int64_t sequence, Clock::duration wait = kWait) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, wait, [&] {
      for (const WatchTableResponse& message : delivered_) {
        if (Stored(message) && message.sequence() >= sequence) return true;
      }
      return false;
    });
  }

  // Waits up to `wait` for a first message; whether one came.
  bool WaitForFirst(Clock::duration wait = kWait) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, wait, [&] { return !delivered_.empty(); });
  }

  // What the watch returned, waiting up to `wait` for it; nullopt while it goes on.
  std::optional<grpc::Status> Ended(Clock::duration wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, wait, [&] { return status_.has_value(); });
    return status_;
  }

  std::vector<WatchTableResponse> delivered() {
    std::lock_guard<std::mutex> lock(mutex_);
    return delivered_;
  }

 private:
  const std::function<bool(const WatchTableResponse&)> keep_going_;
  hearts::WatchCancel cancel_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<WatchTableResponse> delivered_;
  std::optional<grpc::Status> status_;
  std::thread thread_;
};

class WatchResumableTest : public LiveServerTest {
 protected:
  void TearDown() override {
    if (name_.empty()) return;
    DeleteTable();
  }

  // Creates a table of three heuristic bots, dealt with `seed`, and, when `join`, takes seat 0,
  // which starts the game.
  void CreateTable(const std::string& display_name, int64_t seed, bool join) {
    hearts::v1::CreateTableRequest create;
    hearts::v1::Table& table = *create.mutable_table();
    table.set_display_name(display_name);
    table.set_deck_seed(seed);
    for (int seat = 1; seat <= 3; ++seat) {
      hearts::v1::Seat& bot = *table.add_seats();
      bot.set_seat(seat);
      bot.set_occupant(hearts::v1::SEAT_OCCUPANT_BOT);
      bot.set_bot_level(hearts::v1::BOT_LEVEL_HEURISTIC);
    }
    hearts::v1::CreateTableResponse created;
    grpc::ClientContext context;
    Bound(context);
    const grpc::Status status = stub_->CreateTable(&context, create, &created);
    ASSERT_TRUE(status.ok()) << "CreateTable: " << Describe(status);
    name_ = created.view().table().name();
    creator_token_ = created.creator_token();
    view_ = created.view();
    if (!join) return;

    hearts::v1::JoinTableRequest request;
    request.set_name(name_);
    request.set_seat(0);
    request.set_player_display_name("c++ resumable watch");
    hearts::v1::JoinTableResponse joined;
    grpc::ClientContext join_context;
    Bound(join_context);
    const grpc::Status join_status = stub_->JoinTable(&join_context, request, &joined);
    ASSERT_TRUE(join_status.ok()) << "JoinTable: " << Describe(join_status);
    token_ = joined.seat_token();
    view_ = joined.view();
  }

  // The seat's next move: the first cards it may pass, or the first card it may play. False
  // when it owes none.
  bool Move() {
    grpc::ClientContext context;
    Bound(context, token_);
    grpc::Status status;
    if (view_.cards_to_pass() > 0) {
      hearts::v1::PassCardsRequest request;
      request.set_name(name_);
      for (int i = 0; i < view_.cards_to_pass(); ++i) *request.add_cards() = view_.legal_cards(i);
      hearts::v1::PassCardsResponse response;
      status = stub_->PassCards(&context, request, &response);
      view_ = response.view();
    } else if (view_.legal_cards_size() > 0) {
      hearts::v1::PlayCardRequest request;
      request.set_name(name_);
      *request.mutable_card() = view_.legal_cards(0);
      hearts::v1::PlayCardResponse response;
      status = stub_->PlayCard(&context, request, &response);
      view_ = response.view();
    } else {
      return false;
    }
    EXPECT_TRUE(status.ok()) << "the seat's move: " << Describe(status);
    return status.ok();
  }

  // Deletes the table, which ends every stream on it; a second call does nothing.
  void DeleteTable() {
    if (name_.empty()) return;
    hearts::v1::DeleteTableRequest request;
    request.set_name(name_);
    hearts::v1::DeleteTableResponse response;
    grpc::ClientContext context;
    Bound(context, creator_token_);
    const grpc::Status status = stub_->DeleteTable(&context, request, &response);
    EXPECT_TRUE(status.ok()) << "DeleteTable: " << Describe(status);
    name_.clear();
  }

  std::string name_;
  std::string creator_token_;
  std::string token_;
  hearts::v1::TableView view_;
};

TEST_F(WatchResumableTest, AStreamCutTwiceResumesToTheSameEventsWithoutGapsOrRepeats) {
  ASSERT_NO_FATAL_FAILURE(CreateTable("c++ resumable watch", 11, /*join=*/true));
  const int64_t joined_at = view_.sequence();
  const std::string name = name_;

  // The uncut stream to compare with, from the same point, on a channel of its own.
  hearts::v1::WatchTableRequest request;
  request.set_name(name);
  request.set_after_sequence(joined_at);
  Watcher reference(hearts::MakeChannel(address_), request, token_);

  // One reconnect in a row is allowed: the second cut is survived only because the messages in
  // between reset the count. The resumed streams get up to 4 stored events again, which the
  // watch must not deliver twice, and at most one presence change: the second one's 8 messages
  // hold new events.
  const auto log = std::make_shared<StreamLog>(std::vector<int>{4, 8}, /*rewind=*/4);
  const std::unique_ptr<Stub> cutting = CuttingStub(address_, log);
  hearts::WatchOptions options;
  options.after_sequence = joined_at;
  options.token = token_;
  options.max_reconnects = 1;
  options.backoff = milliseconds(10);
  auto watch = std::make_unique<BackgroundWatch>(*cutting, name, options);

  // The game goes on while the watch runs: the pass, then six cards, each move made once the
  // watch has delivered the one before, so that the cuts fall between moves and each resumed
  // stream has events to catch up on and more to follow.
  int moves = 0;
  while (moves < 7 && Move()) {
    ++moves;
    ASSERT_TRUE(watch->WaitForStored(view_.sequence()))
        << "the watch did not deliver sequence " << view_.sequence() << " after move " << moves;
  }
  ASSERT_EQ(moves, 7) << "the seat ran out of moves";
  const int64_t last = view_.sequence();
  // Every stream starts with the presence of the seat's player, right after its resumed events:
  // wait for that of a resumed stream, which repeats a sequence already delivered.
  ASSERT_TRUE(log->WaitFor([](const std::vector<StreamLog::Stream>& streams) {
    for (size_t i = 1; i < streams.size(); ++i) {
      if (streams[i].presence > 0) return true;
    }
    return false;
  })) << "no resumed stream received a presence change";
  watch->cancel().Cancel();
  const std::optional<grpc::Status> ended = watch->Ended(kWait);
  if (!ended) DeleteTable();  // ends the stream, so that the test ends
  ASSERT_TRUE(ended.has_value()) << "the cancelled watch did not return";
  EXPECT_TRUE(ended->ok()) << Describe(*ended);

  std::vector<int64_t> want;
  while (want.empty() || want.back() < last) {
    const auto message = reference.Next();
    ASSERT_TRUE(message.has_value()) << "the uncut stream stopped before " << last;
    if (Stored(*message)) want.push_back(message->sequence());
  }
  for (size_t i = 1; i < want.size(); ++i) ASSERT_LT(want[i - 1], want[i]) << "the uncut stream";
  EXPECT_EQ(want.back(), last);

  std::vector<int64_t> got;
  int presence = 0;
  for (const WatchTableResponse& message : watch->delivered()) {
    if (Stored(message) && message.sequence() <= last) got.push_back(message.sequence());
    if (Presence(message)) ++presence;
  }
  for (auto g : got) std::printf("%lld ", (long long)g);
  EXPECT_EQ(got, want) << "the resumed watch's stored sequences differ from the uncut stream's";

  const std::vector<StreamLog::Stream> streams = log->streams();
  ASSERT_EQ(streams.size(), 3u) << "two cuts, two resumes";
  EXPECT_EQ(streams[0].after_sequence, joined_at);
  for (size_t i = 1; i < streams.size(); ++i) {
    // Resumed after the last stored message delivered before the cut.
    const int64_t before = std::max(streams[i - 1].after_sequence, streams[i - 1].last_stored);
    EXPECT_EQ(streams[i].after_sequence, before) << "stream " << i;
    EXPECT_GT(streams[i].after_sequence, streams[i - 1].after_sequence) << "stream " << i;
  }
  // Presence changes repeat the sequence before them: every one received was delivered.
  int received_presence = 0;
  int replayed = 0;
  for (const StreamLog::Stream& stream : streams) {
    received_presence += stream.presence;
    replayed += stream.replayed;
  }
  EXPECT_EQ(presence, received_presence);
  EXPECT_GT(replayed, 0) << "the server sent no stored event again: the test proves no skipping";
}

TEST_F(WatchResumableTest, ARefusedStreamIsNotOpenedAgain) {
  const auto log = std::make_shared<StreamLog>();
  const std::unique_ptr<Stub> stub = CuttingStub(address_, log);
  hearts::WatchOptions options;
  options.backoff = milliseconds(2'000);  // a retry would wait at least 1 s
  int handled = 0;
  const Clock::time_point start = Clock::now();
  const grpc::Status status = hearts::WatchTableResumable(
      *stub, "tables/0000nosuchtable00000000",
      [&](const WatchTableResponse&) {
        ++handled;
        return true;
      },
      options);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << Describe(status);
  EXPECT_EQ(hearts::StatusDetails(status).reason(), "TABLE_NOT_FOUND") << Describe(status);
  EXPECT_EQ(handled, 0);
  EXPECT_EQ(log->streams().size(), 1u);
  EXPECT_LT(Clock::now() - start, milliseconds(1'000));
}

TEST_F(WatchResumableTest, CancellingEndsTheWatchQuietly) {
  // Three bots and a free seat: a table where nothing happens after the snapshot.
  ASSERT_NO_FATAL_FAILURE(CreateTable("c++ resumable watch, cancelled", 12, /*join=*/false));
  BackgroundWatch watch(*stub_, name_, {});
  ASSERT_TRUE(watch.WaitForFirst());
  watch.cancel().Cancel();
  const std::optional<grpc::Status> ended = watch.Ended(milliseconds(2'000));
  if (!ended) DeleteTable();  // ends the stream, so that the test ends
  ASSERT_TRUE(ended.has_value()) << "the cancelled watch did not return";
  EXPECT_TRUE(ended->ok()) << Describe(*ended);
  const std::vector<WatchTableResponse> delivered = watch.delivered();
  ASSERT_FALSE(delivered.empty());
  EXPECT_TRUE(delivered[0].has_snapshot());
  EXPECT_EQ(delivered[0].snapshot().table().name(), name_);
}

TEST_F(WatchResumableTest, TheHandlerEndsTheWatchByReturningFalse) {
  ASSERT_NO_FATAL_FAILURE(CreateTable("c++ resumable watch, handler stops", 13, /*join=*/false));
  BackgroundWatch watch(*stub_, name_, {}, [](const WatchTableResponse&) { return false; });
  const std::optional<grpc::Status> ended = watch.Ended(kWait);
  if (!ended) DeleteTable();
  ASSERT_TRUE(ended.has_value()) << "the watch went on after its handler returned false";
  EXPECT_TRUE(ended->ok()) << Describe(*ended);
  EXPECT_EQ(watch.delivered().size(), 1u);
}

TEST_F(WatchResumableTest, ADeletedTableEndsTheWatchWithoutAnError) {
  ASSERT_NO_FATAL_FAILURE(CreateTable("c++ resumable watch, deleted", 14, /*join=*/false));
  BackgroundWatch watch(*stub_, name_, {});
  ASSERT_TRUE(watch.WaitForFirst());
  DeleteTable();
  const std::optional<grpc::Status> ended = watch.Ended(kWait);
  ASSERT_TRUE(ended.has_value()) << "the watch went on after the table was deleted";
  EXPECT_TRUE(ended->ok()) << Describe(*ended);
  const std::vector<WatchTableResponse> delivered = watch.delivered();
  EXPECT_TRUE(delivered.back().has_event() && delivered.back().event().has_table_deleted());
}

TEST_F(WatchResumableTest, AsksForHeartbeatsAndPassesThemOn) {
  ASSERT_NO_FATAL_FAILURE(CreateTable("c++ resumable watch, heartbeats", 15, /*join=*/false));
  const auto log = std::make_shared<StreamLog>();
  const std::unique_ptr<Stub> stub = CuttingStub(address_, log);
  hearts::WatchOptions options;
  options.heartbeat_interval = milliseconds(5'250);  // the shortest the server takes is 5 s
  BackgroundWatch watch(*stub, name_, options, [](const WatchTableResponse& message) {
    return !message.has_heartbeat();
  });
  const std::optional<grpc::Status> ended = watch.Ended(kWait);
  ASSERT_TRUE(ended.has_value()) << "no heartbeat on a quiet table";
  EXPECT_TRUE(ended->ok()) << Describe(*ended);
  EXPECT_TRUE(watch.delivered().back().has_heartbeat());
  const std::vector<StreamLog::Stream> streams = log->streams();
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].heartbeat_interval.seconds(), 5);
  EXPECT_EQ(streams[0].heartbeat_interval.nanos(), 250'000'000);
}

// Without a server: every attempt fails with UNAVAILABLE at once.

TEST(WatchResumable, GivesUpAfterMaxReconnectsFailuresInARowWaitingLongerEachTime) {
  const auto log = std::make_shared<StreamLog>();
  const std::unique_ptr<Stub> stub = CuttingStub(DeadAddress(), log);
  hearts::WatchOptions options;
  options.max_reconnects = 2;
  options.backoff = milliseconds(200);
  BackgroundWatch watch(*stub, "tables/0000nosuchtable00000000", options);
  const std::optional<grpc::Status> ended = watch.Ended(kWait);
  ASSERT_TRUE(ended.has_value()) << "the watch went on trying after max_reconnects";
  EXPECT_EQ(ended->error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(*ended);
  const std::vector<StreamLog::Stream> streams = log->streams();
  ASSERT_EQ(streams.size(), 3u) << "the first attempt and two reconnects";
  // The waits are 0.5 to 1 times 200 ms, then 400 ms (plus the failed attempt, and slack for a
  // busy machine above).
  const auto first = streams[1].opened - streams[0].opened;
  const auto second = streams[2].opened - streams[1].opened;
  EXPECT_GE(first, milliseconds(100));
  EXPECT_LT(first, milliseconds(1'200));
  EXPECT_GE(second, milliseconds(200));
  EXPECT_LT(second, milliseconds(1'400));
}

TEST(WatchResumable, CancellingCutsTheWaitBeforeTheNextAttemptShort) {
  const auto log = std::make_shared<StreamLog>();
  const std::unique_ptr<Stub> stub = CuttingStub(DeadAddress(), log);
  hearts::WatchOptions options;
  options.backoff = milliseconds(6'000);  // the first wait: 3 to 6 s
  BackgroundWatch watch(*stub, "tables/0000nosuchtable00000000", options);
  ASSERT_TRUE(log->WaitFor([](const std::vector<StreamLog::Stream>& streams) {
    return !streams.empty() && streams[0].ended;
  })) << "the first attempt did not fail";
  std::this_thread::sleep_for(milliseconds(100));  // well into the wait
  const Clock::time_point cancelled = Clock::now();
  watch.cancel().Cancel();
  const std::optional<grpc::Status> ended = watch.Ended(kWait);
  ASSERT_TRUE(ended.has_value());
  EXPECT_LT(Clock::now() - cancelled, milliseconds(1'000)) << "the wait ran on after the cancel";
  EXPECT_TRUE(ended->ok()) << Describe(*ended);
  EXPECT_EQ(log->streams().size(), 1u) << "an attempt was made after the cancel";
}

TEST(WatchResumable, CancelledBeforeItStartsItOpensNoStream) {
  const auto log = std::make_shared<StreamLog>();
  const std::unique_ptr<Stub> stub = CuttingStub(DeadAddress(), log);
  hearts::WatchCancel cancel;
  cancel.Cancel();
  hearts::WatchOptions options;
  options.cancel = &cancel;
  const grpc::Status status = hearts::WatchTableResumable(
      *stub, "tables/0000nosuchtable00000000", [](const WatchTableResponse&) { return true; },
      options);
  EXPECT_TRUE(status.ok()) << Describe(status);
  EXPECT_TRUE(log->streams().empty());
}

}  // namespace
}  // namespace hearts_test
