// Plays Hearts against a live hearts-server through this library, as a C++ game would: the
// generated stub on a MakeChannel channel, the seat token as metadata (WithToken), refusals read
// with StatusDetails, cards in notation. It checks what a client relies on: a join retried with
// its request_id gets the same seat, the watch stream tells the whole game in order and shows
// the seat no other seat's cards, every view's hand holds the seat's own cards only, a refused
// move says why (and which cards are legal) and changes nothing, and the totals and result agree
// everywhere.
//
// Needs a server at HEARTS_SERVER (see live_server.h). The test chooses only cards its own view
// offers, except where it means to break a rule. The game is reproducible:
// HEARTS_CONFORMANCE_SEED (default: the clock) is the deck seed, which also seeds the server's
// bots, and the seed of the test's own choices; failures print it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hearts/client.h"
#include "live_server.h"

namespace hearts_test {
namespace {

using hearts::FormatCard;
using hearts::v1::Card;
using hearts::v1::TableView;
using Stub = hearts::v1::TableService::Stub;

// Keeps the game to a few rounds.
constexpr int kTargetScore = 20;
// The seat the test joins; the other three are heuristic bots.
constexpr int kSeat = 0;
// A game to 20 takes a few rounds of 13 tricks: far fewer moves of one seat than this.
constexpr int kMaxMoves = 1000;

// The refusals (method/reason) the game must meet, each provoked on purpose. MUST_FOLLOW_SUIT
// needs the seat to follow a trick while holding the led suit and another, which every game of a
// few rounds brings about.
const std::set<std::string> kRequiredRefusals = {
    "PassCards/WRONG_PASS_COUNT", "PassCards/DUPLICATE_CARD",  "PassCards/CARD_NOT_IN_HAND",
    "PassCards/ETAG_MISMATCH",    "PassCards/NOT_A_PLAYER",    "PassCards/TOKEN_MISSING",
    "PassCards/WRONG_PHASE",      "PassCards/GAME_OVER",       "PlayCard/WRONG_PHASE",
    "PlayCard/CARD_NOT_IN_HAND",  "PlayCard/MUST_FOLLOW_SUIT", "PlayCard/INVALID_CARD",
    "PlayCard/ETAG_MISMATCH",     "PlayCard/GAME_OVER",
};

int64_t GameSeed() {
  const char* text = std::getenv("HEARTS_CONFORMANCE_SEED");
  if (text != nullptr && *text != '\0') return std::strtoll(text, nullptr, 10);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count() % 1'000'000'000;
}

// A fresh AIP-155 request id (a version-4 UUID), random on every run: a server that outlives a
// run must not take a later run's request for a retry.
std::string RequestId() {
  static std::mt19937_64 random(std::random_device{}());
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  uint8_t b[16];
  for (uint8_t& byte : b) byte = static_cast<uint8_t>(random());
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) id += '-';
    id += kHex[b[i] >> 4];
    id += kHex[b[i] & 0xf];
  }
  return id;
}

::testing::AssertionResult Ok(const grpc::Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << Describe(status);
}

bool Contains(const google::protobuf::RepeatedPtrField<Card>& cards, const Card& card) {
  return std::any_of(cards.begin(), cards.end(),
                     [&](const Card& c) { return hearts::SameCard(c, card); });
}

// Cards in notation, in their order: "[QS 2C]".
template <typename Cards>
std::string Notation(const Cards& cards) {
  std::string text = "[";
  for (const Card& card : cards) text += (text.size() > 1 ? " " : "") + FormatCard(card);
  return text + "]";
}

// Cards in notation, sorted, to compare sets of cards.
template <typename Cards>
std::vector<std::string> Sorted(const Cards& cards) {
  std::vector<std::string> notations;
  for (const Card& card : cards) notations.push_back(FormatCard(card));
  std::sort(notations.begin(), notations.end());
  return notations;
}

Card Parse(const char* text) {
  const auto card = hearts::ParseCard(text);
  EXPECT_TRUE(card.has_value()) << "the test's own card " << text;
  return card.value_or(Card());
}

// The first card of the deck that the seat does not hold.
Card NotInHand(const TableView& view) {
  for (const char rank : std::string("23456789TJQKA")) {
    for (const char suit : std::string("CDHS")) {
      const Card card = Parse(std::string{rank, suit}.c_str());
      if (!Contains(view.hand(), card)) return card;
    }
  }
  ADD_FAILURE() << "a hand never holds the whole deck";
  return Card();
}

// The reason the server must give for playing `card`, which the seat holds but may not play now:
// the first clause of the (default) rules it breaks.
std::string IllegalPlayReason(const TableView& view, const Card& card) {
  const auto& trick = view.current_trick().cards();
  if (!trick.empty()) {
    const hearts::v1::Suit led = trick[0].card().suit();
    const bool holds_led = std::any_of(view.hand().begin(), view.hand().end(),
                                       [&](const Card& c) { return c.suit() == led; });
    return holds_led ? "MUST_FOLLOW_SUIT" : "NO_POINTS_ON_FIRST_TRICK";
  }
  if (view.completed_tricks().empty()) return "MUST_LEAD_TWO_OF_CLUBS";
  EXPECT_EQ(card.suit(), hearts::v1::SUIT_HEARTS)
      << FormatCard(card) << " is refused on an empty trick after the first";
  return "HEARTS_NOT_BROKEN";
}

// Whether a stream may deliver `message` after one numbered `last`: numbers grow, except that an
// unstored event (a reaction, a presence change) repeats the number of the event before it.
bool InSequence(int64_t last, const hearts::v1::WatchTableResponse& message) {
  const auto kind = message.event().event_case();
  const bool unstored = message.has_event() && (kind == hearts::v1::TableEvent::kReaction ||
                                                kind == hearts::v1::TableEvent::kPresenceChanged);
  return unstored ? message.sequence() >= last : message.sequence() > last;
}

class ConformanceTest : public LiveServerTest {
 protected:
  void SetUp() override {
    LiveServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    seed_ = GameSeed();
    random_.seed(static_cast<uint64_t>(seed_));
    std::cout << "seed " << seed_ << " (HEARTS_CONFORMANCE_SEED replays it)\n";
  }

  // Runs a unary call, bounded by kWait, with `token` (if any) as its authorization.
  template <typename Request, typename Response>
  grpc::Status Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response, std::string_view token) {
    grpc::ClientContext context;
    Bound(context, token);
    return (stub_.get()->*method)(&context, request, response);
  }

  // Creates a table of three heuristic bots with the deck seed and joins kSeat, which deals the
  // first round; a retry of the join (same request_id) must get the same seat and token.
  void CreateAndJoin() {
    hearts::v1::CreateTableRequest create;
    hearts::v1::Table& table = *create.mutable_table();
    table.set_display_name("c++ conformance");
    table.mutable_rules()->set_target_score(kTargetScore);
    table.set_deck_seed(seed_);
    for (int seat = 1; seat <= 3; ++seat) {
      hearts::v1::Seat& bot = *table.add_seats();
      bot.set_seat(seat);
      bot.set_occupant(hearts::v1::SEAT_OCCUPANT_BOT);
      bot.set_bot_level(hearts::v1::BOT_LEVEL_HEURISTIC);
    }
    create.set_request_id(RequestId());
    hearts::v1::CreateTableResponse created;
    ASSERT_TRUE(Ok(Call(&Stub::CreateTable, create, &created, {}))) << "CreateTable";
    name_ = created.view().table().name();
    creator_token_ = created.creator_token();
    stale_etag_ = created.view().table().etag();
    ASSERT_EQ(name_.rfind("tables/", 0), 0u) << name_;
    ASSERT_FALSE(creator_token_.empty());
    std::cout << "table " << name_ << "\n";

    hearts::v1::JoinTableRequest join;
    join.set_name(name_);
    join.set_seat(kSeat);
    join.set_player_display_name("c++ conformance");
    join.set_request_id(RequestId());
    hearts::v1::JoinTableResponse joined;
    ASSERT_TRUE(Ok(Call(&Stub::JoinTable, join, &joined, {}))) << "JoinTable " << name_;
    ASSERT_EQ(joined.seat(), kSeat);
    ASSERT_FALSE(joined.seat_token().empty());
    seat_token_ = joined.seat_token();
    joined_ = joined.view();
    ASSERT_TRUE(joined_.has_viewer_seat() && joined_.viewer_seat() == kSeat);
    ASSERT_EQ(joined_.hand_size(), 13);
    const auto phase = joined_.table().phase();
    ASSERT_TRUE(phase == hearts::v1::PHASE_PASSING || phase == hearts::v1::PHASE_PLAYING)
        << "after the fourth seat joined the phase is " << phase;

    hearts::v1::JoinTableResponse again;
    ASSERT_TRUE(Ok(Call(&Stub::JoinTable, join, &again, {}))) << "JoinTable retried";
    EXPECT_EQ(again.seat(), kSeat) << "a retried join took another seat";
    EXPECT_EQ(again.seat_token(), seat_token_) << "a retried join got another token";
  }

  hearts::v1::PassCardsRequest PassRequest(const std::vector<Card>& cards,
                                           const std::string& etag) const {
    hearts::v1::PassCardsRequest request;
    request.set_name(name_);
    for (const Card& card : cards) *request.add_cards() = card;
    request.set_etag(etag);
    request.set_request_id(RequestId());
    return request;
  }

  hearts::v1::PlayCardRequest PlayRequest(const Card& card, const std::string& etag) const {
    hearts::v1::PlayCardRequest request;
    request.set_name(name_);
    *request.mutable_card() = card;
    request.set_etag(etag);
    request.set_request_id(RequestId());
    return request;
  }

  // The seat's view now.
  void GetView(TableView* view) {
    hearts::v1::GetTableRequest request;
    request.set_name(name_);
    hearts::v1::GetTableResponse response;
    ASSERT_TRUE(Ok(Call(&Stub::GetTable, request, &response, seat_token_))) << "GetTable";
    *view = response.view();
  }

  // Makes the seat's next move, chosen at random from what its view offers, on the view's etag;
  // `after` is the view the response carries. A seat that owes no move (never with inline bots,
  // but a client may not assume that) reads the table again.
  void MakeMove(const TableView& view, TableView* after) {
    const auto& legal = view.legal_cards();
    if (view.cards_to_pass() > 0) {
      // While passing, legal_cards are the cards the seat may pass: its hand.
      std::vector<Card> cards(legal.begin(), legal.end());
      std::shuffle(cards.begin(), cards.end(), random_);
      cards.resize(static_cast<size_t>(view.cards_to_pass()));
      hearts::v1::PassCardsResponse response;
      const auto request = PassRequest(cards, view.table().etag());
      ASSERT_TRUE(Ok(Call(&Stub::PassCards, request, &response, seat_token_)))
          << "PassCards " << Notation(cards) << " from " << Notation(view.hand());
      *after = response.view();
    } else if (!legal.empty()) {
      const Card& card = legal[static_cast<int>(random_() % legal.size())];
      hearts::v1::PlayCardResponse response;
      const auto request = PlayRequest(card, view.table().etag());
      ASSERT_TRUE(Ok(Call(&Stub::PlayCard, request, &response, seat_token_)))
          << "PlayCard " << FormatCard(card) << " (legal " << Notation(legal) << ")";
      *after = response.view();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      GetView(after);
    }
  }

  // Checks a refused call's code and ErrorInfo (domain hearts.v1, the reason, the table).
  void ExpectRefused(const std::string& what, const grpc::Status& status, grpc::StatusCode code,
                     const std::string& reason) {
    ASSERT_FALSE(status.ok()) << what << " succeeded; it must be refused";
    const hearts::StatusDetails details(status);
    ASSERT_TRUE(details.error_info().has_value())
        << what << ": " << Describe(status) << " carries no hearts.v1 ErrorInfo";
    EXPECT_EQ(status.error_code(), code) << what << ": " << Describe(status);
    EXPECT_EQ(details.reason(), reason) << what << ": " << Describe(status);
    EXPECT_EQ(details.error_info()->domain(), "hearts.v1");
  }

  // Checks a move the rules refuse: FAILED_PRECONDITION with the reason, the table's name in the
  // ErrorInfo, and a MoveRejection that repeats the reason and the view's legal cards.
  void ExpectMoveRefused(const std::string& what, const grpc::Status& status,
                         const std::string& reason, const TableView& view) {
    ASSERT_NO_FATAL_FAILURE(
        ExpectRefused(what, status, grpc::StatusCode::FAILED_PRECONDITION, reason));
    const hearts::StatusDetails details(status);
    const auto& metadata = details.error_info()->metadata();
    EXPECT_TRUE(metadata.count("table") == 1 && metadata.at("table") == name_)
        << what << ": the ErrorInfo names no table, or another";
    ASSERT_TRUE(details.move_rejection().has_value())
        << what << ": " << Describe(status) << " carries no hearts.v1.MoveRejection";
    const hearts::v1::MoveRejection& rejection = *details.move_rejection();
    EXPECT_EQ(rejection.reason(), reason) << what;
    EXPECT_EQ(Notation(rejection.legal_cards()), Notation(view.legal_cards()))
        << what << ": the MoveRejection's legal cards, want the view's";
    EXPECT_EQ(rejection.cards_to_pass(), view.cards_to_pass()) << what;
  }

  // A refused call changes nothing: the etag and the sequence are those of the view.
  void ExpectUnchanged(const TableView& view, const std::string& what) {
    TableView now;
    ASSERT_NO_FATAL_FAILURE(GetView(&now));
    EXPECT_EQ(now.table().etag(), view.table().etag()) << what << " changed the table";
    EXPECT_EQ(now.sequence(), view.sequence()) << what << " changed the table";
  }

  // While the seat owes its pass: passes the rules refuse, a good pass the server refuses before
  // the rules look at it, and a play.
  void RefusePasses(const TableView& view) {
    const auto& legal = view.legal_cards();
    ASSERT_GE(legal.size(), 3);
    const Card a = legal[0], b = legal[1], c = legal[2];
    const std::string etag = view.table().etag();
    const std::vector<std::pair<std::vector<Card>, std::string>> bad_passes = {
        {{a, b}, "WRONG_PASS_COUNT"},
        {{a, a, b}, "DUPLICATE_CARD"},
        {{a, b, NotInHand(view)}, "CARD_NOT_IN_HAND"},
    };
    for (const auto& [cards, reason] : bad_passes) {
      hearts::v1::PassCardsResponse response;
      const auto status = Call(&Stub::PassCards, PassRequest(cards, etag), &response, seat_token_);
      ExpectMoveRefused("PassCards " + Notation(cards), status, reason, view);
      refusals_.insert("PassCards/" + reason);
    }

    struct BadRequest {
      const char* what;
      std::string token;
      std::string etag;
      grpc::StatusCode code;
      std::string reason;
    };
    const std::vector<BadRequest> bad_requests = {
        {"a stale etag", seat_token_, stale_etag_, grpc::StatusCode::ABORTED, "ETAG_MISMATCH"},
        {"the creator token", creator_token_, etag, grpc::StatusCode::PERMISSION_DENIED,
         "NOT_A_PLAYER"},
        {"no token", "", etag, grpc::StatusCode::UNAUTHENTICATED, "TOKEN_MISSING"},
    };
    for (const BadRequest& bad : bad_requests) {
      hearts::v1::PassCardsResponse response;
      const auto request = PassRequest({a, b, c}, bad.etag);
      const auto status = Call(&Stub::PassCards, request, &response, bad.token);
      ExpectRefused(std::string("PassCards with ") + bad.what, status, bad.code, bad.reason);
      refusals_.insert("PassCards/" + bad.reason);
    }

    hearts::v1::PlayCardResponse response;
    const auto status = Call(&Stub::PlayCard, PlayRequest(a, etag), &response, seat_token_);
    ExpectMoveRefused("PlayCard while passing", status, "WRONG_PHASE", view);
    refusals_.insert("PlayCard/WRONG_PHASE");
    ExpectUnchanged(view, "refused passes");
  }

  // On the seat's turn: each illegal card of its hand whose reason was not met yet, a card it does
  // not hold, a card that names no card, a pass, and a legal card with a stale etag.
  void RefusePlays(const TableView& view) {
    const std::string etag = view.table().etag();
    bool refused = false;
    std::vector<std::pair<Card, std::string>> tries;
    for (const Card& card : view.hand()) {
      if (Contains(view.legal_cards(), card)) continue;
      tries.emplace_back(card, IllegalPlayReason(view, card));
    }
    tries.emplace_back(NotInHand(view), "CARD_NOT_IN_HAND");
    for (const auto& [card, reason] : tries) {
      if (!refusals_.insert("PlayCard/" + reason).second) continue;
      hearts::v1::PlayCardResponse response;
      const auto status = Call(&Stub::PlayCard, PlayRequest(card, etag), &response, seat_token_);
      ExpectMoveRefused("PlayCard " + FormatCard(card) + " holding " + Notation(view.hand()) +
                            " with legal " + Notation(view.legal_cards()),
                        status, reason, view);
      refused = true;
    }
    if (refusals_.insert("PlayCard/INVALID_CARD").second) {
      hearts::v1::PlayCardResponse response;
      const auto status = Call(&Stub::PlayCard, PlayRequest(Card(), etag), &response, seat_token_);
      ExpectRefused("PlayCard of a card with no suit and rank", status,
                    grpc::StatusCode::INVALID_ARGUMENT, "INVALID_CARD");
      refused = true;
    }
    if (view.hand_size() >= 3 && refusals_.insert("PassCards/WRONG_PHASE").second) {
      const std::vector<Card> cards(view.hand().begin(), view.hand().begin() + 3);
      hearts::v1::PassCardsResponse response;
      const auto status = Call(&Stub::PassCards, PassRequest(cards, etag), &response, seat_token_);
      ExpectMoveRefused("PassCards while playing", status, "WRONG_PHASE", view);
      refused = true;
    }
    if (refusals_.insert("PlayCard/ETAG_MISMATCH").second) {
      hearts::v1::PlayCardResponse response;
      const auto request = PlayRequest(view.legal_cards(0), stale_etag_);
      const auto status = Call(&Stub::PlayCard, request, &response, seat_token_);
      ExpectRefused("PlayCard with a stale etag", status, grpc::StatusCode::ABORTED,
                    "ETAG_MISMATCH");
      refused = true;
    }
    if (refused) ExpectUnchanged(view, "refused plays");
  }

  // A finished game refuses every move with GAME_OVER.
  void RefuseAfterGameOver(const TableView& view) {
    hearts::v1::PlayCardResponse played;
    auto status = Call(&Stub::PlayCard, PlayRequest(Parse("2C"), ""), &played, seat_token_);
    ExpectMoveRefused("PlayCard after the game", status, "GAME_OVER", view);
    refusals_.insert("PlayCard/GAME_OVER");
    hearts::v1::PassCardsResponse passed;
    const auto request = PassRequest({Parse("2C"), Parse("3C"), Parse("4C")}, "");
    status = Call(&Stub::PassCards, request, &passed, seat_token_);
    ExpectMoveRefused("PassCards after the game", status, "GAME_OVER", view);
    refusals_.insert("PassCards/GAME_OVER");
  }

  // A view of the seat shows its own seat and cards only; its hand is kept to be checked against
  // the deals once the game is over and reveals them.
  void CheckView(const TableView& view) {
    EXPECT_TRUE(view.has_viewer_seat() && view.viewer_seat() == kSeat);
    for (const auto* cards : {&view.passed_cards(), &view.received_cards()}) {
      EXPECT_TRUE(cards->empty() || cards->size() == 3) << Notation(*cards);
    }
    const hearts::v1::Table& table = view.table();
    if (table.phase() == hearts::v1::PHASE_GAME_OVER) {
      EXPECT_TRUE(table.has_deck_seed() && table.deck_seed() == seed_)
          << "the finished game reveals no deck seed, or another";
      EXPECT_EQ(view.game_history_size(), table.round_number());
      return;
    }
    EXPECT_FALSE(table.has_deck_seed()) << "the deck seed shows before the game is over";
    EXPECT_EQ(view.game_history_size(), 0) << "the history shows before the game is over";
    hands_.emplace_back(table.round_number(),
                        std::vector<Card>(view.hand().begin(), view.hand().end()));
    if (table.phase() != hearts::v1::PHASE_PLAYING) return;
    const auto& trick = view.current_trick().cards();
    const bool played_now = std::any_of(trick.begin(), trick.end(),
                                        [](const auto& played) { return played.seat() == kSeat; });
    EXPECT_EQ(view.hand_size() + view.completed_tricks_size() + (played_now ? 1 : 0), 13)
        << "a hand of " << Notation(view.hand()) << " after " << view.completed_tricks_size()
        << " tricks";
    std::vector<hearts::v1::Trick> tricks(view.completed_tricks().begin(),
                                          view.completed_tricks().end());
    tricks.push_back(view.current_trick());
    for (const auto& done : tricks) {
      for (const auto& played : done.cards()) {
        EXPECT_FALSE(Contains(view.hand(), played.card()))
            << FormatCard(played.card()) << " is in the hand and was played";
      }
    }
  }

  // Every hand the seat was shown held only its own cards: those dealt to it that round, and
  // those passed to it.
  void CheckHands(const TableView& final_view) {
    for (const auto& [round, hand] : hands_) {
      ASSERT_TRUE(round >= 1 && round <= final_view.game_history_size()) << "round " << round;
      const hearts::v1::RoundHistory& history = final_view.game_history(round - 1);
      std::set<std::string> own;
      for (const auto& deal : history.deals()) {
        if (deal.seat() != kSeat) continue;
        for (const Card& card : deal.cards()) own.insert(FormatCard(card));
      }
      for (const auto& pass : history.passes()) {
        if (pass.to_seat() != kSeat) continue;
        for (const Card& card : pass.cards()) own.insert(FormatCard(card));
      }
      EXPECT_TRUE(own.size() == 13 || own.size() == 16) << "round " << round << ": " << own.size();
      for (const Card& card : hand) {
        EXPECT_EQ(own.count(FormatCard(card)), 1u)
            << "round " << round << ": the hand " << Notation(hand) << " shows "
            << FormatCard(card) << ", which was neither dealt nor passed to seat " << kSeat;
      }
    }
  }

  // Checks the messages of a stream that began right after sequence `after` and ran until the
  // table was deleted, against the seat's final view of the finished game.
  void CheckStream(int64_t after, const std::vector<hearts::v1::WatchTableResponse>& messages,
                   const TableView& final_view) {
    using hearts::v1::TableEvent;
    const auto& history = final_view.game_history();
    auto dealt = [&](int round) {
      for (const auto& deal : history[round - 1].deals()) {
        if (deal.seat() == kSeat) return Sorted(deal.cards());
      }
      return std::vector<std::string>();
    };
    auto passed = [&](int round, bool to_seat) {
      for (const auto& pass : history[round - 1].passes()) {
        if ((to_seat ? pass.to_seat() : pass.from_seat()) == kSeat) return Sorted(pass.cards());
      }
      return std::vector<std::string>();
    };
    EXPECT_EQ(Sorted(joined_.hand()), dealt(1)) << "the join's hand is not the first deal";

    int64_t last = after;
    int round = 1;  // dealt by the join, before `after`; later rounds start on the stream
    int next_trick = 1;
    std::vector<std::string> trick_cards;
    std::vector<int32_t> totals(4, 0);
    std::vector<hearts::v1::RoundScore> scores;
    std::vector<std::pair<int, bool>> presences;
    const hearts::v1::GameOverEvent* game_over = nullptr;
    bool deleted = false;
    for (size_t i = 0; i < messages.size(); ++i) {
      const auto& message = messages[i];
      SCOPED_TRACE("message " + std::to_string(i) + ": " + message.ShortDebugString());
      ASSERT_TRUE(InSequence(last, message)) << "sequence " << message.sequence() << " after "
                                             << last << ": sequences must grow";
      last = message.sequence();
      ASSERT_FALSE(message.has_snapshot()) << "the stream could not resume after " << after;
      ASSERT_FALSE(message.has_heartbeat()) << "a heartbeat nobody asked for";
      ASSERT_TRUE(message.has_event());
      ASSERT_FALSE(deleted) << "a message after table_deleted";
      const TableEvent& event = message.event();
      switch (event.event_case()) {
        // Another seat's cards never reach this seat: its deal, its pass, what it received.
        case TableEvent::kHandDealt:
          ASSERT_EQ(event.hand_dealt().seat(), kSeat) << "another seat's hand";
          EXPECT_EQ(Sorted(event.hand_dealt().cards()), dealt(round));
          break;
        case TableEvent::kCardsPassed:
          ASSERT_EQ(event.cards_passed().seat(), kSeat) << "another seat's pass";
          EXPECT_EQ(Sorted(event.cards_passed().cards()), passed(round, false));
          break;
        case TableEvent::kCardsReceived:
          ASSERT_EQ(event.cards_received().seat(), kSeat) << "another seat's received cards";
          EXPECT_EQ(Sorted(event.cards_received().cards()), passed(round, true));
          break;
        case TableEvent::kRoundStarted:
          ASSERT_EQ(event.round_started().round_number(), round + 1);
          ASSERT_EQ(scores.size(), static_cast<size_t>(round)) << "a round started unscored";
          round = event.round_started().round_number();
          next_trick = 1;
          break;
        case TableEvent::kCardPlayed:
          ASSERT_EQ(event.card_played().trick_number(), next_trick);
          trick_cards.push_back(std::to_string(event.card_played().seat()) + ":" +
                                FormatCard(event.card_played().card()));
          break;
        case TableEvent::kTrickWon: {
          const hearts::v1::Trick& trick = event.trick_won().trick();
          ASSERT_EQ(trick.number(), next_trick);
          EXPECT_TRUE(trick.has_winner());
          std::vector<std::string> cards;
          for (const auto& played : trick.cards()) {
            cards.push_back(std::to_string(played.seat()) + ":" + FormatCard(played.card()));
          }
          EXPECT_EQ(cards, trick_cards) << "trick_won and the card_played events differ";
          trick_cards.clear();
          ++next_trick;
          break;
        }
        case TableEvent::kRoundScored: {
          const hearts::v1::RoundScore& score = event.round_scored().score();
          ASSERT_EQ(score.round_number(), round);
          EXPECT_EQ(next_trick, 14) << "a round scored after " << next_trick - 1 << " tricks";
          ASSERT_EQ(score.points_size(), 4);
          for (int seat = 0; seat < 4; ++seat) totals[seat] += score.points(seat);
          EXPECT_EQ(std::vector<int32_t>(score.total_scores().begin(), score.total_scores().end()),
                    totals);
          scores.push_back(score);
          break;
        }
        case TableEvent::kGameOver:
          EXPECT_EQ(scores.size(), static_cast<size_t>(round)) << "game_over before the score";
          game_over = &event.game_over();
          break;
        case TableEvent::kTableDeleted:
          deleted = true;
          break;
        case TableEvent::kPresenceChanged:
          presences.emplace_back(event.presence_changed().seat(),
                                 event.presence_changed().connected());
          break;
        default:
          break;
      }
    }

    // The seat is the one player and its stream was open throughout: the stream reports it
    // connected once, and no bot ever.
    EXPECT_EQ(presences, (std::vector<std::pair<int, bool>>{{kSeat, true}}));
    ASSERT_NE(game_over, nullptr) << "the stream delivered no game_over";
    EXPECT_TRUE(deleted) << "the stream ended without table_deleted";
    const hearts::v1::Table& table = final_view.table();
    const std::vector<int32_t> final_totals(table.total_scores().begin(),
                                            table.total_scores().end());
    EXPECT_EQ(std::vector<int32_t>(game_over->total_scores().begin(),
                                   game_over->total_scores().end()),
              final_totals);
    EXPECT_EQ(totals, final_totals) << "the rounds' points do not add up to the totals";
    EXPECT_EQ(game_over->result().ShortDebugString(), table.result().ShortDebugString());
    EXPECT_TRUE(table.result().winners_size() > 0 && table.result().losers_size() > 0);
    EXPECT_EQ(static_cast<size_t>(table.round_number()), scores.size());
    EXPECT_GE(*std::max_element(final_totals.begin(), final_totals.end()), kTargetScore);
  }

  int64_t seed_ = 0;
  std::mt19937_64 random_;
  std::string name_;
  std::string creator_token_;
  std::string seat_token_;
  std::string stale_etag_;  // the table's before the join: stale ever after
  TableView joined_;
  std::set<std::string> refusals_;
  std::vector<std::pair<int, std::vector<Card>>> hands_;  // (round, hand) of every view
};

// Plays kSeat against three heuristic bots to the end, choosing only cards its own view offers,
// and on the way provokes every kind of refused move; the stream, views and totals must agree.
TEST_F(ConformanceTest, AWholeGameInOrderWithOnlyTheSeatsOwnCardsAndEveryRefusal) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  ASSERT_NO_FATAL_FAILURE(CreateAndJoin());

  // Watch from just after the join, with the seat token, on a channel of its own.
  const int64_t after = joined_.sequence();
  hearts::v1::WatchTableRequest watch;
  watch.set_name(name_);
  watch.set_after_sequence(after);
  Watcher watcher(hearts::MakeChannel(address_), watch, seat_token_);

  TableView view = joined_;
  int moves = 0;
  bool refused_passes = false;
  while (view.table().phase() != hearts::v1::PHASE_GAME_OVER) {
    ASSERT_LT(moves++, kMaxMoves) << "no game over";
    ASSERT_NO_FATAL_FAILURE(CheckView(view));
    if (view.cards_to_pass() > 0 && !refused_passes) {
      ASSERT_NO_FATAL_FAILURE(RefusePasses(view));
      refused_passes = true;
    } else if (view.cards_to_pass() == 0 && !view.legal_cards().empty()) {
      ASSERT_NO_FATAL_FAILURE(RefusePlays(view));
    }
    TableView next;
    ASSERT_NO_FATAL_FAILURE(MakeMove(view, &next));
    view = std::move(next);
  }
  ASSERT_NO_FATAL_FAILURE(CheckView(view));
  std::cout << "game over after " << view.table().round_number() << " rounds and " << moves
            << " moves of seat " << kSeat << "\n";
  ASSERT_NO_FATAL_FAILURE(RefuseAfterGameOver(view));

  // The game_over event may still be in flight when the last move's response arrives.
  std::vector<hearts::v1::WatchTableResponse> messages;
  auto is_game_over = [](const hearts::v1::WatchTableResponse& m) {
    return m.event().event_case() == hearts::v1::TableEvent::kGameOver;
  };
  while (std::none_of(messages.begin(), messages.end(), is_game_over)) {
    auto message = watcher.Next();
    ASSERT_TRUE(message.has_value()) << "no game_over on the stream within " << kWait.count()
                                     << " s of the last move";
    messages.push_back(std::move(*message));
  }
  TableView final_view;
  ASSERT_NO_FATAL_FAILURE(GetView(&final_view));
  ASSERT_NO_FATAL_FAILURE(CheckView(final_view));
  ASSERT_NO_FATAL_FAILURE(CheckHands(final_view));

  // Deleting the table ends the stream cleanly, after a table_deleted event.
  hearts::v1::DeleteTableRequest remove;
  remove.set_name(name_);
  remove.set_request_id(RequestId());
  hearts::v1::DeleteTableResponse removed;
  ASSERT_TRUE(Ok(Call(&Stub::DeleteTable, remove, &removed, creator_token_))) << "DeleteTable";
  const auto ended = watcher.Ended(kWait);
  ASSERT_TRUE(ended.has_value()) << "the stream did not end within " << kWait.count()
                                 << " s of the table's deletion";
  EXPECT_TRUE(Ok(ended->first)) << "the stream's end";
  while (auto message = watcher.Next(std::chrono::milliseconds(0))) {
    messages.push_back(std::move(*message));
  }
  ASSERT_NO_FATAL_FAILURE(CheckStream(after, messages, final_view));

  std::vector<std::string> missing;
  std::set_difference(kRequiredRefusals.begin(), kRequiredRefusals.end(), refusals_.begin(),
                      refusals_.end(), std::back_inserter(missing));
  EXPECT_TRUE(missing.empty()) << "refusals never provoked: " << ::testing::PrintToString(missing);
  std::cout << refusals_.size() << " refusals checked: " << ::testing::PrintToString(refusals_)
            << "\n";
}

}  // namespace
}  // namespace hearts_test
