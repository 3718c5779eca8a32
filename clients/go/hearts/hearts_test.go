package hearts

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

func TestEveryCardFormatsAndParsesBack(t *testing.T) {
	seen := map[string]bool{}
	for suit := heartsv1.Suit_SUIT_CLUBS; suit <= heartsv1.Suit_SUIT_SPADES; suit++ {
		for rank := heartsv1.Rank_RANK_TWO; rank <= heartsv1.Rank_RANK_ACE; rank++ {
			text := FormatCard(&heartsv1.Card{Suit: suit, Rank: rank})
			card, err := ParseCard(text)
			if err != nil || card.GetSuit() != suit || card.GetRank() != rank {
				t.Fatalf("%s: %v %v", text, card, err)
			}
			seen[text] = true
		}
	}
	if len(seen) != 52 || !seen["QS"] || !seen["TD"] || !seen["2C"] {
		t.Errorf("texts: %v", seen)
	}
}

func TestCardsAreReadInEitherCaseAndWith10(t *testing.T) {
	for text, want := range map[string]string{"qs": "QS", "10D": "TD", "10h": "TH", "td": "TD"} {
		card, err := ParseCard(text)
		if err != nil || FormatCard(card) != want {
			t.Errorf("%q: %v %v, want %s", text, card, err, want)
		}
	}
	for _, text := range []string{"", "Q", "SQ", "1C", "10", "100C", "QSS", " QS", "Q♠", "Qſ"} {
		if _, err := ParseCard(text); !errors.Is(err, ErrNotACard) {
			t.Errorf("%q: %v", text, err)
		}
	}
	if got := FormatCard(&heartsv1.Card{}); got != "?0/0" {
		t.Errorf("an unset card: %s", got)
	}
}

func TestWithTokenSendsABearerToken(t *testing.T) {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-trace", "1")
	old := WithToken(ctx, "abc")
	md, _ := metadata.FromOutgoingContext(old)
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer abc" {
		t.Errorf("authorization %q", got)
	}
	// A renewed token replaces the old one, and keeps the rest.
	md, _ = metadata.FromOutgoingContext(WithToken(old, "def"))
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer def" || md.Get("x-trace")[0] != "1" {
		t.Errorf("after renewal: %v", md)
	}
	md, _ = metadata.FromOutgoingContext(old)
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer abc" {
		t.Errorf("the first context changed: %q", got)
	}
}

func TestReasonAndRejectionComeFromTheStatusDetails(t *testing.T) {
	st, err := status.New(codes.FailedPrecondition, "follow suit").WithDetails(
		&errdetails.ErrorInfo{Reason: "MUST_FOLLOW_SUIT", Domain: "hearts.v1"},
		&heartsv1.MoveRejection{Reason: "MUST_FOLLOW_SUIT", LegalCards: []*heartsv1.Card{{Suit: heartsv1.Suit_SUIT_CLUBS, Rank: heartsv1.Rank_RANK_TWO}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	refused := st.Err()
	if Reason(refused) != "MUST_FOLLOW_SUIT" {
		t.Errorf("reason %q", Reason(refused))
	}
	if r := Rejection(refused); r == nil || len(r.GetLegalCards()) != 1 || FormatCard(r.GetLegalCards()[0]) != "2C" {
		t.Errorf("rejection %v", r)
	}
	bare := status.Error(codes.Unavailable, "no reason")
	if Reason(bare) != "" || Rejection(bare) != nil || Reason(nil) != "" || Reason(errors.New("plain")) != "" {
		t.Error("an error without details has no reason")
	}
}
