// A watch stream on a connection that died without a word ends with UNAVAILABLE, thanks to the
// keepalive pings of hearts::MakeChannel, instead of waiting forever.
//
// The client reaches the live server through a TCP relay on loopback that the test then cuts: it
// forwards nothing more either way but keeps every socket open (no FIN, no RST), as when a NAT
// entry is dropped or a laptop sleeps. With the interval at 10 s (the shortest the server
// accepts) and a 2 s timeout the stream fails about 12 s after the cut. Without keepalive it
// would wait forever (checked by hand: with the interval set to an hour the test fails).
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hearts/client.h"
#include "live_server.h"

namespace hearts_test {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The test's keepalive: the server's shortest accepted interval, and a short timeout.
const hearts::Keepalive kKeepalive{seconds(10), seconds(2)};
// How long the stream may take to fail after the cut (about interval + timeout is expected).
constexpr seconds kFailWithin{30};
// A failure sooner than this after the cut came before any ping was due: something else (the
// relay closing a socket, say) ended the stream, and the test would prove nothing.
constexpr seconds kNotBefore{8};

// A TCP relay on 127.0.0.1 to a server, and its switch: once cut, it forwards nothing more either
// way, on every connection, and keeps their sockets open until it is destroyed.
class Relay {
 public:
  explicit Relay(const std::string& upstream) {
    const size_t colon = upstream.rfind(':');
    upstream_host_ = upstream.substr(0, colon);
    upstream_port_ = upstream.substr(colon + 1);
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(listener_, 8) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "the relay cannot listen: errno " << errno;
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~Relay() {
    closing_ = true;
    acceptor_.join();
    for (std::thread& thread : forwarders_) thread.join();
    for (int socket : sockets_) close(socket);
    close(listener_);
  }

  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  void Cut() { cut_ = true; }

 private:
  // Waits up to 100 ms for `socket` to be readable, so that every loop sees closing_ soon.
  static bool Readable(int socket) {
    pollfd poller{socket, POLLIN, 0};
    return poll(&poller, 1, 100) > 0;
  }

  int ConnectUpstream() const {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(upstream_host_.c_str(), upstream_port_.c_str(), &hints, &found) != 0) {
      return -1;
    }
    int upstream = socket(found->ai_family, SOCK_STREAM, 0);
    if (connect(upstream, found->ai_addr, found->ai_addrlen) != 0) {
      close(upstream);
      upstream = -1;
    }
    freeaddrinfo(found);
    return upstream;
  }

  void Accept() {
    while (!closing_) {
      if (!Readable(listener_)) continue;
      const int downstream = accept(listener_, nullptr, nullptr);
      if (downstream < 0) continue;
      const int upstream = cut_ ? -1 : ConnectUpstream();
      std::lock_guard<std::mutex> lock(mutex_);
      sockets_.push_back(downstream);
      if (upstream < 0) continue;  // cut, or no server: the connection goes nowhere
      sockets_.push_back(upstream);
      forwarders_.emplace_back([this, downstream, upstream] { Forward(downstream, upstream); });
      forwarders_.emplace_back([this, downstream, upstream] { Forward(upstream, downstream); });
    }
  }

  // Copies `from` to `to` until either closes or the relay is cut; from then on it reads, writes
  // and closes nothing.
  void Forward(int from, int to) {
    char buffer[16 * 1024];
    while (!closing_) {
      if (cut_) {
        std::this_thread::sleep_for(milliseconds(100));
        continue;
      }
      if (!Readable(from)) continue;
      const ssize_t n = read(from, buffer, sizeof(buffer));
      if (n <= 0) {
        // Before the cut a closed side is passed on, as a working network does.
        shutdown(to, SHUT_RDWR);
        shutdown(from, SHUT_RDWR);
        return;
      }
      for (ssize_t sent = 0; sent < n && !cut_;) {
        const ssize_t written = send(to, buffer + sent, n - sent, MSG_NOSIGNAL);
        if (written <= 0) return;
        sent += written;
      }
    }
  }

  std::string upstream_host_;
  std::string upstream_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> cut_{false};
  std::atomic<bool> closing_{false};
  std::mutex mutex_;
  std::vector<int> sockets_;
  std::thread acceptor_;
  // Only the acceptor adds to it; the destructor joins them once the acceptor has ended.
  std::vector<std::thread> forwarders_;
};

// How a watch stream through the relay ended after the cut.
struct Ending {
  grpc::Status status;
  milliseconds after_cut;
};

class KeepaliveTest : public LiveServerTest {
 protected:
  // Creates a table with three bots and an empty seat: the game waits, so a stream of it is
  // quiet after its snapshot.
  void SetUp() override {
    LiveServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    hearts::v1::CreateTableRequest request;
    request.mutable_table()->set_display_name("c++ keepalive");
    for (int seat = 1; seat <= 3; ++seat) {
      hearts::v1::Seat* bot = request.mutable_table()->add_seats();
      bot->set_seat(seat);
      bot->set_occupant(hearts::v1::SEAT_OCCUPANT_BOT);
      bot->set_bot_level(hearts::v1::BOT_LEVEL_RANDOM);
    }
    grpc::ClientContext context;
    Bound(context);
    const grpc::Status status = stub_->CreateTable(&context, request, &created_);
    ASSERT_TRUE(status.ok()) << "CreateTable: " << Describe(status);
  }

  void TearDown() override {
    if (created_.creator_token().empty()) return;
    hearts::v1::DeleteTableRequest request;
    request.set_name(created_.view().table().name());
    hearts::v1::DeleteTableResponse response;
    grpc::ClientContext context;
    Bound(context, created_.creator_token());
    const grpc::Status status = stub_->DeleteTable(&context, request, &response);
    EXPECT_TRUE(status.ok()) << "DeleteTable: " << Describe(status);
  }

  // Watches the table as a spectator through a relay, on a channel of its own with kKeepalive;
  // `quiet` after the snapshot cuts the relay, and waits up to kFailWithin for the stream to end.
  std::optional<Ending> WatchAndCut(Clock::duration quiet) {
    Relay relay(address_);
    hearts::v1::WatchTableRequest request;
    request.set_name(created_.view().table().name());
    Watcher watcher(hearts::MakeChannel(relay.address(), kKeepalive), request);
    const auto first = watcher.Next();
    if (!first.has_value() || !first->has_snapshot()) {
      ADD_FAILURE() << "the stream did not start with a snapshot within " << kWait.count() << " s";
      return std::nullopt;
    }
    if (watcher.Ended(quiet)) {
      ADD_FAILURE() << "the stream ended before the cut";
      return std::nullopt;
    }
    relay.Cut();
    const Clock::time_point cut_at = Clock::now();
    const auto ended = watcher.Ended(kFailWithin);
    if (!ended.has_value()) {
      ADD_FAILURE() << "the stream had not ended " << kFailWithin.count()
                    << " s after the cut (no keepalive?)";
      return std::nullopt;
    }
    const auto late = watcher.Next(milliseconds(0));
    EXPECT_FALSE(late.has_value()) << "after the cut the stream gave " << late->DebugString();
    const Ending ending{ended->first, duration_cast<milliseconds>(ended->second - cut_at)};
    std::cout << "the stream failed " << ending.after_cut.count()
              << " ms after the cut: " << Describe(ending.status) << "\n";
    return ending;
  }

  hearts::v1::CreateTableResponse created_;
};

TEST_F(KeepaliveTest, AWatchOnADeadConnectionFailsWithUnavailableInsteadOfHanging) {
  const std::optional<Ending> ending = WatchAndCut(seconds(0));
  ASSERT_TRUE(ending.has_value());
  EXPECT_EQ(ending->status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << Describe(ending->status);
  EXPECT_GE(ending->after_cut, kNotBefore) << "it failed before a ping was due";
}

// C-core sends at most GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA pings (2 by default) until the
// client sends data, which a watch never does after its request: with that default this stream,
// its two pings answered before the cut, would wait forever (checked by hand).
TEST_F(KeepaliveTest, AWatchQuietPastTwoPingsStillFindsItsConnectionDead) {
  const std::optional<Ending> ending = WatchAndCut(kKeepalive.time * 2 + seconds(5));
  ASSERT_TRUE(ending.has_value());
  EXPECT_EQ(ending->status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << Describe(ending->status);
}

}  // namespace
}  // namespace hearts_test
