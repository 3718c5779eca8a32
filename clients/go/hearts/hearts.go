// Package hearts holds the few helpers every Go client of hearts.v1 would otherwise write
// itself, beside the generated code in hearts/v1: sending a seat token, the card notation that
// the server, the docs and the other clients use ("QS", "TD"), the stable reason (and the
// legal cards) of a refused call, and a table's stream that resumes by itself (WatchTable).
package hearts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

const (
	ranks = "23456789TJQKA"
	suits = "CDHS"
)

// WithToken returns ctx carrying token (a seat or creator token) as the call's
// "authorization: Bearer <token>" metadata, as the API wants it. A token ctx carried already is
// replaced (a renewed token on a context made for the old one): two would be refused.
func WithToken(ctx context.Context, token string) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set("authorization", "Bearer "+token)
	return metadata.NewOutgoingContext(ctx, md)
}

// FormatCard writes the card as rank then suit, such as "QS" or "TD"; a card that names no card
// (an unset or unknown suit or rank) as "?suit/rank" with the numbers.
func FormatCard(card *heartsv1.Card) string {
	rank := int(card.GetRank() - heartsv1.Rank_RANK_TWO)
	suit := int(card.GetSuit() - heartsv1.Suit_SUIT_CLUBS)
	if rank < 0 || rank >= len(ranks) || suit < 0 || suit >= len(suits) {
		return fmt.Sprintf("?%d/%d", card.GetSuit(), card.GetRank())
	}
	return string([]byte{ranks[rank], suits[suit]})
}

// ErrNotACard is what ParseCard's errors wrap.
var ErrNotACard = errors.New("not a card: write rank (2-9, T or 10, J, Q, K, A) then suit (C, D, H, S), as QS")

// ParseCard reads a card written as FormatCard writes it, in either case, with "10" for "T"
// too ("QS", "td", "10H"), as the other clients read it.
func ParseCard(text string) (*heartsv1.Card, error) {
	upper := asciiUpper(text)
	if len(upper) == 3 && strings.HasPrefix(upper, "10") {
		upper = "T" + upper[2:]
	}
	if len(upper) == 2 {
		rank, suit := strings.IndexByte(ranks, upper[0]), strings.IndexByte(suits, upper[1])
		if rank >= 0 && suit >= 0 {
			return &heartsv1.Card{
				Rank: heartsv1.Rank_RANK_TWO + heartsv1.Rank(rank),
				Suit: heartsv1.Suit_SUIT_CLUBS + heartsv1.Suit(suit),
			}, nil
		}
	}
	return nil, fmt.Errorf("%q: %w", text, ErrNotACard)
}

// asciiUpper upper-cases ASCII letters only: strings.ToUpper would read "ſ" (U+017F) as "S".
func asciiUpper(text string) string {
	b := []byte(text)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// Reason is the stable, machine-readable reason of a failed call (its google.rpc.ErrorInfo,
// such as "MUST_FOLLOW_SUIT" or "ETAG_MISMATCH"; docs/api.md lists them), or "" when err is nil
// or carries none (an error of the transport, say: see its status code then).
func Reason(err error) string {
	if info := errorInfo(err); info != nil {
		return info.GetReason()
	}
	return ""
}

// Rejection is the MoveRejection of a refused PassCards or PlayCard (why, and the legal cards
// or how many cards to pass now), or nil.
func Rejection(err error) *heartsv1.MoveRejection {
	for _, detail := range details(err) {
		if rejection, ok := detail.(*heartsv1.MoveRejection); ok {
			return rejection
		}
	}
	return nil
}

func errorInfo(err error) *errdetails.ErrorInfo {
	for _, detail := range details(err) {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

func details(err error) []any {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	return st.Details()
}
