// What the tests against a live server share: the server's address (HEARTS_SERVER, host:port,
// set by scripts/with-server.sh; without it the tests are skipped, or fail when
// HEARTS_CONFORMANCE_REQUIRED is set), bounded calls, and a WatchTable stream read on a thread
// of its own.
#ifndef HEARTS_TESTS_LIVE_SERVER_H_
#define HEARTS_TESTS_LIVE_SERVER_H_

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "hearts/client.h"

namespace hearts_test {

using Clock = std::chrono::steady_clock;

// Bounds each call, and each wait for the watch stream.
inline constexpr std::chrono::seconds kWait{10};

// A test that needs the server at HEARTS_SERVER: address_ and stub_ are set before the body runs.
class LiveServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* address = std::getenv("HEARTS_SERVER");
    if (address == nullptr || *address == '\0') {
      if (std::getenv("HEARTS_CONFORMANCE_REQUIRED") != nullptr) {
        FAIL() << "HEARTS_CONFORMANCE_REQUIRED is set, but HEARTS_SERVER is not";
      }
      GTEST_SKIP() << "HEARTS_SERVER is unset; run under scripts/with-server.sh";
    }
    address_ = address;
    stub_ = hearts::v1::TableService::NewStub(hearts::MakeChannel(address_));
  }

  std::string address_;
  std::unique_ptr<hearts::v1::TableService::Stub> stub_;
};

// Gives a unary call kWait, and the token (if any) as its authorization.
inline void Bound(grpc::ClientContext& context, std::string_view token = {}) {
  context.set_deadline(std::chrono::system_clock::now() + kWait);  // gRPC takes system_clock only
  if (!token.empty()) hearts::WithToken(context, token);
}

// A status as "CODE REASON: message", for failure messages.
inline std::string Describe(const grpc::Status& status) {
  const hearts::StatusDetails details(status);
  std::string text = "code " + std::to_string(status.error_code());
  if (!details.reason().empty()) text += " " + details.reason();
  return text + ": " + status.error_message();
}

// One WatchTable stream, read on a thread of its own (grpc::ClientReader::Read blocks) into a
// queue that the test waits on with a bound. No deadline: that would end the stream.
class Watcher {
 public:
  Watcher(std::shared_ptr<grpc::Channel> channel, const hearts::v1::WatchTableRequest& request,
          std::string_view token = {})
      : stub_(hearts::v1::TableService::NewStub(std::move(channel))) {
    if (!token.empty()) hearts::WithToken(context_, token);
    thread_ = std::thread([this, request] { Read(request); });
  }

  ~Watcher() {
    context_.TryCancel();
    thread_.join();
  }

  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // The next message, waiting up to `wait`; nullopt when none came (the stream ended, or the
  // wait ran out).
  std::optional<hearts::v1::WatchTableResponse> Next(Clock::duration wait = kWait) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return !messages_.empty() || status_.has_value(); });
    if (messages_.empty()) return std::nullopt;
    hearts::v1::WatchTableResponse message = std::move(messages_.front());
    messages_.pop_front();
    return message;
  }

  // How the stream ended, and when, waiting up to `wait` for it; nullopt while it goes on.
  // Messages still queued are left for Next.
  std::optional<std::pair<grpc::Status, Clock::time_point>> Ended(Clock::duration wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return status_.has_value(); });
    if (!status_) return std::nullopt;
    return std::make_pair(*status_, ended_at_);
  }

 private:
  void Read(const hearts::v1::WatchTableRequest& request) {
    auto reader = stub_->WatchTable(&context_, request);
    hearts::v1::WatchTableResponse message;
    while (reader->Read(&message)) {
      std::lock_guard<std::mutex> lock(mutex_);
      messages_.push_back(message);
      changed_.notify_all();
    }
    grpc::Status status = reader->Finish();
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = std::move(status);
    ended_at_ = Clock::now();
    changed_.notify_all();
  }

  std::unique_ptr<hearts::v1::TableService::Stub> stub_;
  grpc::ClientContext context_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<hearts::v1::WatchTableResponse> messages_;
  std::optional<grpc::Status> status_;
  Clock::time_point ended_at_;
  std::thread thread_;
};

}  // namespace hearts_test

#endif  // HEARTS_TESTS_LIVE_SERVER_H_
