// The hand-written helpers without a server: card notation, StatusDetails, the channel's
// keepalive arguments, and the statuses after which a watch resumes.
#include <chrono>
#include <limits>
#include <map>
#include <string>

#include <grpc/grpc.h>
#include <gtest/gtest.h>

#include "google/rpc/status.pb.h"
#include "hearts/client.h"

namespace {

using hearts::FormatCard;
using hearts::ParseCard;
using hearts::v1::Card;

Card MakeCard(hearts::v1::Rank rank, hearts::v1::Suit suit) {
  Card card;
  card.set_rank(rank);
  card.set_suit(suit);
  return card;
}

TEST(CardNotation, EveryCardOfTheDeckFormatsAndParsesBack) {
  int cards = 0;
  for (int suit = hearts::v1::SUIT_CLUBS; suit <= hearts::v1::SUIT_SPADES; ++suit) {
    for (int rank = hearts::v1::RANK_TWO; rank <= hearts::v1::RANK_ACE; ++rank) {
      const Card card =
          MakeCard(static_cast<hearts::v1::Rank>(rank), static_cast<hearts::v1::Suit>(suit));
      const std::string text = FormatCard(card);
      ASSERT_EQ(text.size(), 2u) << text;
      const auto parsed = ParseCard(text);
      ASSERT_TRUE(parsed.has_value()) << text;
      EXPECT_TRUE(hearts::SameCard(*parsed, card)) << text;
      ++cards;
    }
  }
  EXPECT_EQ(cards, 52);
}

TEST(CardNotation, ReadsTheProjectsNotation) {
  using namespace hearts::v1;  // the enum values
  EXPECT_TRUE(hearts::SameCard(*ParseCard("QS"), MakeCard(RANK_QUEEN, SUIT_SPADES)));
  EXPECT_TRUE(hearts::SameCard(*ParseCard("TD"), MakeCard(RANK_TEN, SUIT_DIAMONDS)));
  EXPECT_TRUE(hearts::SameCard(*ParseCard("2C"), MakeCard(RANK_TWO, SUIT_CLUBS)));
  EXPECT_FALSE(hearts::SameCard(*ParseCard("2C"), MakeCard(RANK_TWO, SUIT_DIAMONDS)));
  EXPECT_EQ(FormatCard(MakeCard(hearts::v1::RANK_ACE, hearts::v1::SUIT_HEARTS)), "AH");
}

TEST(CardNotation, AcceptsTenAsTwoDigitsAndEitherCase) {
  EXPECT_EQ(FormatCard(*ParseCard("10H")), "TH");
  EXPECT_EQ(FormatCard(*ParseCard("td")), "TD");
  EXPECT_EQ(FormatCard(*ParseCard("qs")), "QS");
}

TEST(CardNotation, RefusesWhatIsNotACard) {
  for (const char* text : {"", "Q", "QSS", "1S", "0S", "11S", "QX", "XS", "10", "1 0H", " QS"}) {
    EXPECT_FALSE(ParseCard(text).has_value()) << '"' << text << '"';
  }
}

TEST(CardNotation, ACardThatNamesNoCardShowsItsNumbers) {
  EXPECT_EQ(FormatCard(Card()), "?0/0");
  EXPECT_EQ(FormatCard(MakeCard(hearts::v1::RANK_ACE, hearts::v1::SUIT_UNSPECIFIED)), "?0/14");
}

// A status as the server sends it: code, message, and a google.rpc.Status in error_details.
grpc::Status ServerStatus(const google::rpc::ErrorInfo* info,
                          const hearts::v1::MoveRejection* rejection) {
  google::rpc::Status details;
  details.set_code(grpc::StatusCode::FAILED_PRECONDITION);
  details.set_message("refused");
  if (info != nullptr) details.add_details()->PackFrom(*info);
  if (rejection != nullptr) details.add_details()->PackFrom(*rejection);
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "refused",
                      details.SerializeAsString());
}

TEST(StatusDetails, ReadsTheReasonAndTheMoveRejection) {
  google::rpc::ErrorInfo info;
  info.set_reason("MUST_FOLLOW_SUIT");
  info.set_domain("hearts.v1");
  (*info.mutable_metadata())["table"] = "tables/abc";
  hearts::v1::MoveRejection rejection;
  rejection.set_reason("MUST_FOLLOW_SUIT");
  *rejection.add_legal_cards() = *ParseCard("QS");

  const hearts::StatusDetails details(ServerStatus(&info, &rejection));
  EXPECT_EQ(details.reason(), "MUST_FOLLOW_SUIT");
  ASSERT_TRUE(details.error_info().has_value());
  EXPECT_EQ(details.error_info()->metadata().at("table"), "tables/abc");
  ASSERT_TRUE(details.move_rejection().has_value());
  ASSERT_EQ(details.move_rejection()->legal_cards_size(), 1);
  EXPECT_EQ(FormatCard(details.move_rejection()->legal_cards(0)), "QS");
}

TEST(StatusDetails, IgnoresAnErrorInfoOfAnotherDomain) {
  google::rpc::ErrorInfo info;
  info.set_reason("RATE_LIMITED");
  info.set_domain("example.com");
  const hearts::StatusDetails details(ServerStatus(&info, nullptr));
  EXPECT_EQ(details.reason(), "");
  EXPECT_FALSE(details.error_info().has_value());
  EXPECT_FALSE(details.move_rejection().has_value());
}

TEST(StatusDetails, AStatusWithoutDetailsHasNone) {
  for (const grpc::Status& status :
       {grpc::Status::OK, grpc::Status(grpc::StatusCode::UNAVAILABLE, "no connection"),
        grpc::Status(grpc::StatusCode::INTERNAL, "garbage", "\xff\xff not a status")}) {
    const hearts::StatusDetails details(status);
    EXPECT_EQ(details.reason(), "");
    EXPECT_FALSE(details.error_info().has_value());
    EXPECT_FALSE(details.move_rejection().has_value());
  }
}

TEST(ChannelArguments, KeepaliveIsOnWithTheTimeoutForEveryPingAndNoPingLimit) {
  const grpc::ChannelArguments arguments =
      hearts::ChannelArguments({std::chrono::seconds(10), std::chrono::seconds(2)});
  const grpc_channel_args args = arguments.c_channel_args();
  std::map<std::string, int> ints;
  for (size_t i = 0; i < args.num_args; ++i) {
    if (args.args[i].type == GRPC_ARG_INTEGER) ints[args.args[i].key] = args.args[i].value.integer;
  }
  const std::map<std::string, int> want = {
      {GRPC_ARG_KEEPALIVE_TIME_MS, 10'000},
      {GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2'000},
      {"grpc.http2.ping_timeout_ms", 2'000},
      {GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0},
      {GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0},
  };
  EXPECT_EQ(ints, want);
}

TEST(ChannelArguments, ADurationPastWhatGrpcTakesIsItsLongest) {
  // gRPC takes milliseconds in an int; a longer one must not wrap round to a negative number.
  const grpc::ChannelArguments arguments = hearts::ChannelArguments(
      {std::chrono::hours(24 * 365), std::chrono::milliseconds::max()});
  const grpc_channel_args args = arguments.c_channel_args();
  for (size_t i = 0; i < args.num_args; ++i) {
    const std::string key = args.args[i].key;
    if (key == GRPC_ARG_KEEPALIVE_TIME_MS || key == GRPC_ARG_KEEPALIVE_TIMEOUT_MS) {
      EXPECT_EQ(args.args[i].value.integer, std::numeric_limits<int>::max()) << key;
    }
  }
}

// A status as the server sends it, with an ErrorInfo of `reason` (none when empty).
grpc::Status WithReason(grpc::StatusCode code, const std::string& reason) {
  if (reason.empty()) return grpc::Status(code, "bare");
  google::rpc::ErrorInfo info;
  info.set_reason(reason);
  info.set_domain("hearts.v1");
  google::rpc::Status details;
  details.set_code(code);
  details.add_details()->PackFrom(info);
  return grpc::Status(code, reason, details.SerializeAsString());
}

TEST(IsResumable, OnlyAFailureOfTheServerOrTheNetworkIsWatchedAgain) {
  using grpc::StatusCode;
  const struct {
    StatusCode code;
    const char* reason;
    bool resumable;
  } cases[] = {
      {StatusCode::UNAVAILABLE, "", true},
      {StatusCode::UNAVAILABLE, "STREAM_LAGGED", true},
      {StatusCode::UNAVAILABLE, "SHUTTING_DOWN", true},
      {StatusCode::DEADLINE_EXCEEDED, "", true},
      {StatusCode::RESOURCE_EXHAUSTED, "OVERLOADED", true},
      {StatusCode::RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS", true},
      {StatusCode::RESOURCE_EXHAUSTED, "", false},  // a message over the size limit
      {StatusCode::RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS_FROM_ADDRESS", false},
      {StatusCode::RESOURCE_EXHAUSTED, "TOO_MANY_TABLES", false},
      {StatusCode::RESOURCE_EXHAUSTED, "TOO_MANY_REACTIONS", false},
      {StatusCode::CANCELLED, "", true},  // the server shed the call
      {StatusCode::CANCELLED, "CLIENT_CLOSED", false},
      {StatusCode::NOT_FOUND, "TABLE_NOT_FOUND", false},
      {StatusCode::UNAUTHENTICATED, "TOKEN_REVOKED", false},
      {StatusCode::INVALID_ARGUMENT, "", false},
      {StatusCode::INTERNAL, "", false},
      {StatusCode::UNKNOWN, "", false},
      {StatusCode::OK, "", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(hearts::IsResumable(WithReason(c.code, c.reason)), c.resumable)
        << "code " << c.code << " reason " << c.reason;
  }
}

TEST(WithToken, RefusesATokenThatGrpcCouldNotSend) {
  // A token read from a file with its line break: gRPC would abort the process on the call.
  grpc::ClientContext context;
  EXPECT_FALSE(hearts::WithToken(context, "v1.abc.def\n"));
  EXPECT_FALSE(hearts::WithToken(context, std::string("v1.a\0b", 6)));
  EXPECT_TRUE(hearts::WithToken(context, "v1.abc.def"));
}

}  // namespace
