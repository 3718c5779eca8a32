// Package conformance_test plays Hearts against a live hearts-server through the generated Go
// client, exactly as a Go program would: plain gRPC calls, the seat token as metadata, error
// details read with status.FromError. It checks what a client relies on: the watch stream tells
// the whole game in order, a refused move says why, a forged token is refused, a finished game's
// player gets a rematch (and does not before the game is over), SuggestMove's moves play a game
// out, a player's reactions reach another seat's stream (with the number of the event before
// them, as they are not stored) and change nothing, within a limit and for players only, a
// stream tells which players have a stream open (their presence, never a bot's), an
// identity token names the player on its seat, ListPlayerTables finds a signed-in player's seats
// (and a new device gets the seat back), four QuickJoin callers asking for the same game
// are seated together and play it out, and a QuickJoin caller whom nobody joins plays
// against the bots that fill the table after the wait asked for.
//
// The tests need a server at HEARTS_SERVER (host:port) and are skipped without one;
// scripts/with-server.sh starts one and sets it. They never choose a card the caller's own view
// does not offer, except where a test means to break a rule.
//
// Every game is reproducible: HEARTS_CONFORMANCE_SEED (default: the clock) is the deck seed, which
// also seeds the server's bots, and the seed of the test's own card choices. Failures print it.
package conformance_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hearts-dev/hearts/clients/go/hearts"
	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// targetScore keeps a game to a few rounds.
const targetScore = 20

// quickTargetScore is the target score of the quick game, which no other test asks for: the
// four QuickJoin callers of one test must not sit down at another test's table.
const quickTargetScore = 30

// fillTargetScore is the target score of the game that bots fill, which no other test asks for
// (see quickTargetScore); it is small, to keep the game short.
const fillTargetScore = 15

// keepaliveParams are the README's: a ping after 60 s without anything from the server, while a
// call is open, and 20 s for its answer. Time must stay at least 10 s, the server's limit.
var keepaliveParams = keepalive.ClientParameters{Time: 60 * time.Second, Timeout: 20 * time.Second}

// testTimeout bounds each test; a whole game with inline bots takes well under a second.
const testTimeout = 60 * time.Second

// humanSeat is the seat the test joins; the other three are heuristic bots.
const humanSeat = 0

// TestWatchStreamTellsAWholeGameInOrder plays one human seat against three heuristic bots to the
// end, choosing only cards its own view offers, and checks that the watch stream delivered every
// trick and every round's score in order, and that the final totals agree everywhere.
func TestWatchStreamTellsAWholeGameInOrder(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	watch := startWatch(ctx, t, client, game.name, game.seatToken, game.view.GetSequence())

	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	view := game.view
	moves := 0
	for view.GetTable().GetPhase() != heartsv1.Phase_PHASE_GAME_OVER {
		view = move(ctx, t, client, game, view, rng)
		moves++
	}
	t.Logf("seed %d: game over after %d rounds and %d moves of seat %d", seed,
		view.GetTable().GetRoundNumber(), moves, humanSeat)

	// The game_over event may still be in flight when the last move's response arrives.
	watch.waitFor(t, func(event *heartsv1.TableEvent) bool { return event.GetGameOver() != nil })
	final := getView(ctx, t, client, game.name, game.seatToken)

	// Deleting the table must end the stream, after a TableDeletedEvent.
	deleteTable(ctx, t, client, game.name, game.creatorToken)
	messages, streamErr := watch.wait(t)
	if streamErr != nil {
		t.Fatalf("seed %d: the watch stream ended with %v, want a clean end after table_deleted", seed, streamErr)
	}

	checkStream(t, seed, game.view.GetSequence(), messages, final)
}

// TestIllegalPlayIsRefusedWithItsReason plays off suit while holding the led suit, and reads the
// reason (MUST_FOLLOW_SUIT) and the caller's legal cards from the error's details.
func TestIllegalPlayIsRefusedWithItsReason(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	view := game.view
	for view.GetTable().GetPhase() != heartsv1.Phase_PHASE_GAME_OVER {
		offSuit := offSuitCard(view)
		if offSuit == nil {
			view = move(ctx, t, client, game, view, rng)
			continue
		}
		_, err := client.PlayCard(hearts.WithToken(ctx, game.seatToken), &heartsv1.PlayCardRequest{
			Name: game.name,
			Card: offSuit,
		})
		led := view.GetCurrentTrick().GetCards()[0].GetCard()
		situation := fmt.Sprintf("seed %d: seat %d played %s to a trick led with %s, holding %s",
			seed, humanSeat, hearts.FormatCard(offSuit), hearts.FormatCard(led), notations(view.GetHand()))

		got := decodeError(t, err)
		if got.code != codes.FailedPrecondition {
			t.Fatalf("%s: got %v, want FAILED_PRECONDITION", situation, got.code)
		}
		if got.info.GetDomain() != "hearts.v1" || got.info.GetReason() != "MUST_FOLLOW_SUIT" {
			t.Fatalf("%s: ErrorInfo is %v/%v, want hearts.v1/MUST_FOLLOW_SUIT", situation,
				got.info.GetDomain(), got.info.GetReason())
		}
		if table := got.info.GetMetadata()["table"]; table != game.name {
			t.Errorf("%s: ErrorInfo metadata table=%q, want %q", situation, table, game.name)
		}
		if got.rejection == nil {
			t.Fatalf("%s: the status carries no hearts.v1.MoveRejection", situation)
		}
		if got.rejection.GetReason() != got.info.GetReason() {
			t.Errorf("%s: MoveRejection reason %q differs from ErrorInfo reason %q", situation,
				got.rejection.GetReason(), got.info.GetReason())
		}
		if !sameCards(got.rejection.GetLegalCards(), view.GetLegalCards()) {
			t.Errorf("%s: MoveRejection legal_cards %s, want the view's %s", situation,
				notations(got.rejection.GetLegalCards()), notations(view.GetLegalCards()))
		}
		// The package's helpers read the same details.
		if hearts.Reason(err) != "MUST_FOLLOW_SUIT" || !sameCards(hearts.Rejection(err).GetLegalCards(), view.GetLegalCards()) {
			t.Errorf("%s: hearts.Reason %q, hearts.Rejection %v", situation, hearts.Reason(err), hearts.Rejection(err))
		}
		if got.rejection.GetCardsToPass() != 0 {
			t.Errorf("%s: MoveRejection cards_to_pass %d while playing, want 0", situation, got.rejection.GetCardsToPass())
		}
		if after := getView(ctx, t, client, game.name, game.seatToken); after.GetTable().GetEtag() != view.GetTable().GetEtag() {
			t.Errorf("%s: a refused play changed the table's etag", situation)
		}
		return
	}
	t.Fatalf("seed %d: the game ended before seat %d could play off suit while holding the led suit", seed, humanSeat)
}

// TestForgedTokenIsUnauthenticated plays a legal card on the seat's turn with tokens the server
// never issued, and expects UNAUTHENTICATED / TOKEN_INVALID and an unchanged table.
func TestForgedTokenIsUnauthenticated(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 2))

	view := game.view
	for len(view.GetLegalCards()) == 0 || view.GetCardsToPass() > 0 {
		view = move(ctx, t, client, game, view, rng)
	}
	card := view.GetLegalCards()[0]

	forgeries := []struct{ what, token string }{
		{"claims signed with another secret", forgeToken(t, game.name, humanSeat)},
		{"the real claims with another signature", tamperSignature(t, game.seatToken)},
		{"not a token at all", "not-a-token"},
	}
	for _, forgery := range forgeries {
		t.Run(forgery.what, func(t *testing.T) {
			_, err := client.PlayCard(hearts.WithToken(ctx, forgery.token), &heartsv1.PlayCardRequest{Name: game.name, Card: card})
			got := decodeError(t, err)
			if got.code != codes.Unauthenticated {
				t.Fatalf("seed %d: PlayCard(%s) with %s: got %v, want UNAUTHENTICATED", seed, hearts.FormatCard(card), forgery.what, got.code)
			}
			if got.info.GetDomain() != "hearts.v1" || got.info.GetReason() != "TOKEN_INVALID" {
				t.Fatalf("seed %d: with %s: ErrorInfo %v/%v, want hearts.v1/TOKEN_INVALID", seed, forgery.what,
					got.info.GetDomain(), got.info.GetReason())
			}
		})
	}
	if after := getView(ctx, t, client, game.name, game.seatToken); after.GetTable().GetEtag() != view.GetTable().GetEtag() {
		t.Errorf("seed %d: a play with a forged token changed the table", seed)
	}
}

// TestRematchSeatsThePlayerAtANewTable asks for a rematch while the game is in play, which is
// refused as GAME_NOT_OVER, plays the game to the end, and asks again: the seat's token of the
// finished table seats it at the same seat of a new table, and each table names the other.
func TestRematchSeatsThePlayerAtANewTable(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 3))

	_, err := client.RematchTable(hearts.WithToken(ctx, game.seatToken), &heartsv1.RematchTableRequest{
		Name: game.name, RequestId: requestID(t),
	})
	got := decodeError(t, err)
	if got.code != codes.FailedPrecondition || got.info.GetDomain() != "hearts.v1" || got.info.GetReason() != "GAME_NOT_OVER" {
		t.Fatalf("seed %d: RematchTable in play: %v %v/%v, want FAILED_PRECONDITION hearts.v1/GAME_NOT_OVER", seed,
			got.code, got.info.GetDomain(), got.info.GetReason())
	}

	view := game.view
	for view.GetTable().GetPhase() != heartsv1.Phase_PHASE_GAME_OVER {
		view = move(ctx, t, client, game, view, rng)
	}
	rematch, err := client.RematchTable(hearts.WithToken(ctx, game.seatToken), &heartsv1.RematchTableRequest{
		Name: game.name, RequestId: requestID(t),
	})
	if err != nil {
		t.Fatalf("seed %d: RematchTable %s after game over: %v", seed, game.name, describe(err))
	}
	next := rematch.GetView().GetTable()
	t.Logf("seed %d: rematch of %s at %s", seed, game.name, next.GetName())
	if rematch.GetSeat() != humanSeat || rematch.GetView().GetViewerSeat() != humanSeat {
		t.Errorf("seed %d: RematchTable gave seat %d, viewer seat %d; want seat %d", seed,
			rematch.GetSeat(), rematch.GetView().GetViewerSeat(), humanSeat)
	}
	if token := rematch.GetSeatToken(); token == "" || token == game.seatToken {
		t.Errorf("seed %d: RematchTable gave a seat token of %d bytes, want a new one", seed, len(token))
	}
	if !strings.HasPrefix(next.GetName(), "tables/") || next.GetName() == game.name {
		t.Errorf("seed %d: the rematch table is %q, want a table other than %q", seed, next.GetName(), game.name)
	}
	if next.GetRematchOf() != game.name {
		t.Errorf("seed %d: the rematch table's rematch_of is %q, want %q", seed, next.GetRematchOf(), game.name)
	}
	if finished := getView(ctx, t, client, game.name, game.seatToken).GetTable(); finished.GetRematchTable() != next.GetName() {
		t.Errorf("seed %d: the finished table's rematch_table is %q, want %q", seed, finished.GetRematchTable(), next.GetName())
	}
}

// TestSuggestMovePlaysAWholeGame plays the seat's every move on SuggestMove's word: each
// suggestion is legal for the view it was made on, carries that view's etag, and the move made
// with it is accepted. Once the game is over there is nothing to suggest.
func TestSuggestMovePlaysAWholeGame(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	authorized := hearts.WithToken(ctx, game.seatToken)

	view := game.view
	for moves := 0; view.GetTable().GetPhase() != heartsv1.Phase_PHASE_GAME_OVER; moves++ {
		if moves > 2000 {
			t.Fatalf("seed %d: no game over after 2000 moves", seed)
		}
		if len(view.GetLegalCards()) == 0 {
			view = move(ctx, t, client, game, view, nil) // owes nothing: reads the table again
			continue
		}
		hint, err := client.SuggestMove(authorized, &heartsv1.SuggestMoveRequest{Name: game.name})
		if err != nil {
			t.Fatalf("seed %d: SuggestMove: %v", seed, describe(err))
		}
		etag := view.GetTable().GetEtag()
		want := 1
		if view.GetCardsToPass() > 0 {
			want = int(view.GetCardsToPass())
		}
		if hint.GetEtag() != etag || len(hint.GetCards()) != want {
			t.Fatalf("seed %d: SuggestMove gave %s at etag %q; want %d cards at etag %q", seed,
				notations(hint.GetCards()), hint.GetEtag(), want, etag)
		}
		for _, card := range hint.GetCards() {
			if !slices.ContainsFunc(view.GetLegalCards(), func(c *heartsv1.Card) bool { return proto.Equal(c, card) }) {
				t.Fatalf("seed %d: SuggestMove gave %s, not among %s", seed, hearts.FormatCard(card), notations(view.GetLegalCards()))
			}
		}
		if want == 1 {
			response, err := client.PlayCard(authorized, &heartsv1.PlayCardRequest{
				Name: game.name, Card: hint.GetCards()[0], Etag: hint.GetEtag(), RequestId: requestID(t),
			})
			if err != nil {
				t.Fatalf("seed %d: PlayCard of the suggested %s: %v", seed, hearts.FormatCard(hint.GetCards()[0]), describe(err))
			}
			view = response.GetView()
		} else {
			response, err := client.PassCards(authorized, &heartsv1.PassCardsRequest{
				Name: game.name, Cards: hint.GetCards(), Etag: hint.GetEtag(), RequestId: requestID(t),
			})
			if err != nil {
				t.Fatalf("seed %d: PassCards of the suggested %s: %v", seed, notations(hint.GetCards()), describe(err))
			}
			view = response.GetView()
		}
	}
	_, err := client.SuggestMove(authorized, &heartsv1.SuggestMoveRequest{Name: game.name})
	got := decodeError(t, err)
	if got.code != codes.FailedPrecondition || got.info.GetReason() != "GAME_OVER" {
		t.Fatalf("seed %d: SuggestMove after the game: %v %v, want FAILED_PRECONDITION GAME_OVER", seed,
			got.code, got.info.GetReason())
	}
}

// TestIdentityTokenNamesThePlayer joins with an identity token (a JWT the app's backend signs,
// HS256 with the secret the server was given) and checks that the seat carries the token's
// subject as player_id, that the same player joining again gets the same seat with a new token,
// and that a token signed with another secret is refused. It needs HEARTS_IDENTITY_SECRET, the
// server's --identity-secret (scripts/with-server.sh sets both), and is skipped without it.
func TestIdentityTokenNamesThePlayer(t *testing.T) {
	ctx, client := connect(t)
	secret := os.Getenv("HEARTS_IDENTITY_SECRET")
	if secret == "" {
		t.Skip("HEARTS_IDENTITY_SECRET is unset: the server checks no identity tokens")
	}
	seed := gameSeed(t)
	player := fmt.Sprintf("go-player-%d", seed)
	table := &heartsv1.Table{DisplayName: "go conformance " + t.Name(), DeckSeed: proto.Int64(seed)}
	created, err := client.CreateTable(ctx, &heartsv1.CreateTableRequest{Table: table, RequestId: requestID(t)})
	if err != nil {
		t.Fatalf("seed %d: CreateTable: %v", seed, describe(err))
	}
	name := created.GetView().GetTable().GetName()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = client.DeleteTable(hearts.WithToken(ctx, created.GetCreatorToken()), &heartsv1.DeleteTableRequest{Name: name})
	})

	join := func(identityToken string, seat *int32) (*heartsv1.JoinTableResponse, error) {
		return client.JoinTable(ctx, &heartsv1.JoinTableRequest{
			Name: name, Seat: seat, PlayerDisplayName: "go conformance", RequestId: requestID(t),
			IdentityToken: identityToken,
		})
	}
	token := signIdentity(t, secret, player)
	first, err := join(token, proto.Int32(2))
	if err != nil {
		t.Fatalf("seed %d: JoinTable with an identity token: %v", seed, describe(err))
	}
	seat := first.GetView().GetTable().GetSeats()[2]
	if first.GetSeat() != 2 || seat.GetPlayerId() != player {
		t.Fatalf("seed %d: joined seat %d with player_id %q; want seat 2 with %q", seed, first.GetSeat(), seat.GetPlayerId(), player)
	}
	// The same player again (another device), without a seat: the same seat, and a token for it
	// (the same bytes when issued within the same second).
	again, err := join(signIdentity(t, secret, player), nil)
	if err != nil {
		t.Fatalf("seed %d: JoinTable again with the same identity: %v", seed, describe(err))
	}
	if again.GetSeat() != 2 || again.GetSeatToken() == "" {
		t.Fatalf("seed %d: joining again gave seat %d; want seat 2 and its token", seed, again.GetSeat())
	}
	view := getView(ctx, t, client, name, again.GetSeatToken())
	if view.GetViewerSeat() != 2 || view.GetTable().GetSeats()[2].GetPlayerId() != player {
		t.Fatalf("seed %d: the new token is seat %d's; want seat 2 of %q", seed, view.GetViewerSeat(), player)
	}
	// A token signed with another secret.
	_, err = join(signIdentity(t, secret+"-not", "someone-else"), nil)
	got := decodeError(t, err)
	if got.code != codes.Unauthenticated || got.info.GetReason() != "IDENTITY_INVALID" {
		t.Fatalf("seed %d: a forged identity token: %v %v, want UNAUTHENTICATED IDENTITY_INVALID", seed,
			got.code, got.info.GetReason())
	}
}

// signIdentity is an HS256 JWT for subject, valid for an hour, as an app's backend signs it.
func signIdentity(t *testing.T, secret, subject string) string {
	t.Helper()
	encode := base64.RawURLEncoding.EncodeToString
	header, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	claims, err := json.Marshal(map[string]any{"sub": subject, "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	signing := encode(header) + "." + encode(claims)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + encode(mac.Sum(nil))
}

// TestListPlayerTablesFindsThePlayersSeatsAgain signs in a player of its own (a random subject,
// so that no other test or run on the same server adds to its list) and seats it at two tables
// with its identity token: a game with three bots, which deals the round, and then an unlisted
// table that waits for players. ListPlayerTables returns exactly those two, the newer first, each
// with the player's seat. On a "new device" (JoinTable with only the identity token) the player
// gets its seat of the game back, with a token that reads the seat's hand; once it leaves the
// waiting table, before that game starts, the table is no longer in the list. A call without an
// identity token is UNAUTHENTICATED / IDENTITY_REQUIRED, even with a seat token as authorization.
// Like TestIdentityTokenNamesThePlayer, it is skipped without HEARTS_IDENTITY_SECRET.
func TestListPlayerTablesFindsThePlayersSeatsAgain(t *testing.T) {
	ctx, client := connect(t)
	secret := os.Getenv("HEARTS_IDENTITY_SECRET")
	if secret == "" {
		t.Skip("HEARTS_IDENTITY_SECRET is unset: the server checks no identity tokens")
	}
	seed := gameSeed(t)
	player := "go-player-" + requestID(t)
	t.Logf("seed %d: player %s", seed, player)
	join := func(name string, seat *int32) *heartsv1.JoinTableResponse {
		t.Helper()
		joined, err := client.JoinTable(ctx, &heartsv1.JoinTableRequest{
			Name: name, Seat: seat, PlayerDisplayName: "go conformance", RequestId: requestID(t),
			IdentityToken: signIdentity(t, secret, player),
		})
		if err != nil {
			t.Fatalf("seed %d: JoinTable %s with an identity token: %v", seed, name, describe(err))
		}
		return joined
	}
	// mine is the player's list, an entry "tables/... seat N" a table.
	mine := func() ([]string, []*heartsv1.PlayerTable) {
		t.Helper()
		response, err := client.ListPlayerTables(ctx, &heartsv1.ListPlayerTablesRequest{
			IdentityToken: signIdentity(t, secret, player),
		})
		if err != nil {
			t.Fatalf("seed %d: ListPlayerTables: %v", seed, describe(err))
		}
		entries := make([]string, len(response.GetTables()))
		for i, entry := range response.GetTables() {
			entries[i] = fmt.Sprintf("%s seat %d", entry.GetTable().GetName(), entry.GetSeat())
		}
		return entries, response.GetTables()
	}

	const gameSeat, waitingSeat = 2, 1
	game := createTable(ctx, t, client, seed, gameSeat).GetView().GetTable().GetName()
	dealt := join(game, proto.Int32(gameSeat))
	if dealt.GetSeat() != gameSeat || len(dealt.GetView().GetHand()) != 13 {
		t.Fatalf("seed %d: joined seat %d of %s with %d cards; want seat %d, dealt 13", seed,
			dealt.GetSeat(), game, len(dealt.GetView().GetHand()), gameSeat)
	}
	created, err := client.CreateTable(ctx, &heartsv1.CreateTableRequest{
		Table:     &heartsv1.Table{DisplayName: "go conformance " + t.Name(), Unlisted: true},
		RequestId: requestID(t),
	})
	if err != nil {
		t.Fatalf("seed %d: CreateTable (unlisted): %v", seed, describe(err))
	}
	waiting := created.GetView().GetTable().GetName()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = client.DeleteTable(hearts.WithToken(ctx, created.GetCreatorToken()), &heartsv1.DeleteTableRequest{Name: waiting})
	})
	seated := join(waiting, proto.Int32(waitingSeat))

	entries, tables := mine()
	want := []string{fmt.Sprintf("%s seat %d", waiting, waitingSeat), fmt.Sprintf("%s seat %d", game, gameSeat)}
	if !slices.Equal(entries, want) {
		t.Fatalf("seed %d: ListPlayerTables gave %q; want %q (the newest first)", seed, entries, want)
	}
	for _, entry := range tables {
		table := entry.GetTable()
		if id := table.GetSeats()[entry.GetSeat()].GetPlayerId(); id != player {
			t.Errorf("seed %d: %s lists seat %d with player_id %q; want %q", seed, table.GetName(), entry.GetSeat(), id, player)
		}
		if table.GetUnlisted() != (table.GetName() == waiting) {
			t.Errorf("seed %d: %s lists unlisted=%v; only %s is unlisted", seed, table.GetName(), table.GetUnlisted(), waiting)
		}
	}

	// A new device: the identity token alone, no seat, no seat token. The game's seat comes back
	// with a token of its own, which reads the seat's hand as dealt.
	renewed := join(game, nil)
	if renewed.GetSeat() != gameSeat || renewed.GetSeatToken() == "" {
		t.Fatalf("seed %d: JoinTable %s on a new device gave seat %d; want seat %d and its token", seed,
			game, renewed.GetSeat(), gameSeat)
	}
	view := getView(ctx, t, client, game, renewed.GetSeatToken())
	if view.GetViewerSeat() != gameSeat || !sameCards(view.GetHand(), dealt.GetView().GetHand()) {
		t.Fatalf("seed %d: the new device's token reads seat %d holding %s; want seat %d holding %s", seed,
			view.GetViewerSeat(), notations(view.GetHand()), gameSeat, notations(dealt.GetView().GetHand()))
	}

	// Leaving the waiting table before its game starts takes it off the list.
	if _, err := client.LeaveTable(hearts.WithToken(ctx, seated.GetSeatToken()), &heartsv1.LeaveTableRequest{
		Name: waiting, RequestId: requestID(t),
	}); err != nil {
		t.Fatalf("seed %d: LeaveTable %s: %v", seed, waiting, describe(err))
	}
	if entries, _ := mine(); !slices.Equal(entries, want[1:]) {
		t.Fatalf("seed %d: after leaving %s, ListPlayerTables gave %q; want %q", seed, waiting, entries, want[1:])
	}

	// Only an identity token names a player: a seat token names one seat of one table.
	_, err = client.ListPlayerTables(hearts.WithToken(ctx, renewed.GetSeatToken()), &heartsv1.ListPlayerTablesRequest{})
	got := decodeError(t, err)
	if got.code != codes.Unauthenticated || got.info.GetDomain() != "hearts.v1" || got.info.GetReason() != "IDENTITY_REQUIRED" {
		t.Fatalf("seed %d: ListPlayerTables without an identity token: %v %v/%v, want UNAUTHENTICATED hearts.v1/IDENTITY_REQUIRED",
			seed, got.code, got.info.GetDomain(), got.info.GetReason())
	}
}

// TestQuickJoinSeatsFourCallersTogether has four players ask QuickJoin for the same game at
// once: they get one table and four different seats, the fourth join starts the game (passing,
// with the rules and turn timeout asked for), a retry of each request gets the same table and
// seat, and the four seat tokens play the game to the end. The rules (quickTargetScore) are no
// other test's, and the turn timeout is random to the millisecond, so that no other test or run
// on the same server asks for this game and sits down with these four. The server deals a quick
// game's deck at random, so the seed replays only the test's own choices.
func TestQuickJoinSeatsFourCallersTogether(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 4))
	turnTimeout := (10*time.Minute + rand.N(10*time.Minute)).Truncate(time.Millisecond)

	requests := make([]*heartsv1.QuickJoinRequest, 4)
	for i := range requests {
		requests[i] = &heartsv1.QuickJoinRequest{
			Rules:             &heartsv1.Rules{TargetScore: proto.Int32(quickTargetScore)},
			TurnTimeout:       durationpb.New(turnTimeout),
			PlayerDisplayName: fmt.Sprintf("go quick %d", i),
			RequestId:         requestID(t),
		}
	}
	joined := make([]*heartsv1.QuickJoinResponse, len(requests))
	errs := make([]error, len(requests))
	var wg sync.WaitGroup
	for i, request := range requests {
		wg.Go(func() { joined[i], errs[i] = client.QuickJoin(ctx, request) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("seed %d: QuickJoin of %q: %v", seed, requests[i].GetPlayerDisplayName(), describe(err))
		}
	}

	name := joined[0].GetView().GetTable().GetName()
	players := make([]game, 4) // by seat
	names := make([]string, 4) // the display name asked for, by seat
	for i, response := range joined {
		seat := response.GetSeat()
		if got := response.GetView().GetTable().GetName(); got != name {
			t.Fatalf("seed %d: QuickJoin seated %q at %s and %q at %s; want one table", seed,
				requests[0].GetPlayerDisplayName(), name, requests[i].GetPlayerDisplayName(), got)
		}
		if seat < 0 || seat > 3 || names[seat] != "" {
			t.Fatalf("seed %d: QuickJoin gave seat %d to %q as well; want four different seats", seed,
				seat, requests[i].GetPlayerDisplayName())
		}
		if response.GetSeatToken() == "" || response.GetView().GetViewerSeat() != seat {
			t.Fatalf("seed %d: QuickJoin gave seat %d with a token of %d bytes and a view of seat %d", seed,
				seat, len(response.GetSeatToken()), response.GetView().GetViewerSeat())
		}
		names[seat] = requests[i].GetPlayerDisplayName()
		players[seat] = game{name: name, seatToken: response.GetSeatToken(), view: response.GetView()}
	}
	t.Logf("seed %d: four QuickJoins seated at %s (target score %d, turn timeout %v)", seed, name,
		quickTargetScore, turnTimeout)

	// Some view of the table is the fourth join's; read it afresh, as any seat now sees it.
	table := getView(ctx, t, client, name, players[0].seatToken).GetTable()
	if table.GetPhase() != heartsv1.Phase_PHASE_PASSING {
		t.Fatalf("seed %d: after four QuickJoins %s is in phase %v, want passing", seed, name, table.GetPhase())
	}
	if got := table.GetRules().GetTargetScore(); got != quickTargetScore {
		t.Errorf("seed %d: %s has target score %d, want the %d asked for", seed, name, got, quickTargetScore)
	}
	if got := table.GetTurnTimeout().AsDuration(); got != turnTimeout {
		t.Errorf("seed %d: %s has turn timeout %v, want the %v asked for", seed, name, got, turnTimeout)
	}
	for _, s := range table.GetSeats() {
		if s.GetOccupant() != heartsv1.SeatOccupant_SEAT_OCCUPANT_HUMAN || s.GetPlayerDisplayName() != names[s.GetSeat()] {
			t.Errorf("seed %d: seat %d is %v %q, want the player %q", seed, s.GetSeat(), s.GetOccupant(),
				s.GetPlayerDisplayName(), names[s.GetSeat()])
		}
	}

	// A retry, now that the table is full and the next caller would get another one, answers
	// with the first call's table and seat.
	for i, request := range requests {
		again, err := client.QuickJoin(ctx, request)
		if err != nil {
			t.Fatalf("seed %d: QuickJoin of %q again: %v", seed, request.GetPlayerDisplayName(), describe(err))
		}
		if got := again.GetView().GetTable().GetName(); got != name || again.GetSeat() != joined[i].GetSeat() {
			t.Errorf("seed %d: QuickJoin of %q again gave seat %d at %s, want seat %d at %s", seed,
				request.GetPlayerDisplayName(), again.GetSeat(), got, joined[i].GetSeat(), name)
		}
	}

	// Play: every seat that still owes its pass, then the seat whose turn it is.
	moves := 0
	for table.GetPhase() != heartsv1.Phase_PHASE_GAME_OVER {
		if moves++; moves > 2000 {
			t.Fatalf("seed %d: no game over at %s after 2000 moves", seed, name)
		}
		seat := table.GetTurnSeat()
		if table.GetPhase() == heartsv1.Phase_PHASE_PASSING {
			seat = int32(slices.IndexFunc(table.GetSeats(), func(s *heartsv1.Seat) bool { return !s.GetHasPassed() }))
			if seat < 0 {
				t.Fatalf("seed %d: %s is still passing, but every seat has passed", seed, name)
			}
		}
		player := players[seat]
		table = move(ctx, t, client, player, getView(ctx, t, client, name, player.seatToken), rng).GetTable()
	}
	t.Logf("seed %d: game over at %s after %d rounds and %d moves, totals %v", seed, name,
		table.GetRoundNumber(), moves, table.GetTotalScores())
	if highest := slices.Max(table.GetTotalScores()); highest < quickTargetScore {
		t.Errorf("seed %d: the game ended with totals %v, none at the target %d", seed, table.GetTotalScores(), quickTargetScore)
	}
}

// TestQuickJoinFillsTheTableWithBotsAfterTheWait has one player ask QuickJoin for a game with
// fill_with_bots_after 1 s, and nobody else ask for it: the watch stream shows three heuristic
// bots taking the other seats (a PlayerJoinedEvent with bot_level each), no sooner than the wait
// and within a few seconds, and then the first round starting; the player's hand is dealt, the
// table shows the bots and the rules, turn timeout and wait asked for, and the player plays the
// game out against the bots. The rules (fillTargetScore) are no other test's and the turn timeout
// is random to the millisecond, as for the quick game of four, so that nobody else sits down at
// this table. The server deals the deck at random, so the seed replays only the test's choices.
func TestQuickJoinFillsTheTableWithBotsAfterTheWait(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	turnTimeout := (10*time.Minute + rand.N(10*time.Minute)).Truncate(time.Millisecond)
	const wait = time.Second

	asked := time.Now() // the server's wait starts later: at the join
	joined, err := client.QuickJoin(ctx, &heartsv1.QuickJoinRequest{
		Rules:             &heartsv1.Rules{TargetScore: proto.Int32(fillTargetScore)},
		TurnTimeout:       durationpb.New(turnTimeout),
		FillWithBotsAfter: durationpb.New(wait),
		PlayerDisplayName: "go alone",
		RequestId:         requestID(t),
	})
	if err != nil {
		t.Fatalf("seed %d: QuickJoin: %v", seed, describe(err))
	}
	name, seat := joined.GetView().GetTable().GetName(), joined.GetSeat()
	if phase := joined.GetView().GetTable().GetPhase(); phase != heartsv1.Phase_PHASE_WAITING_FOR_PLAYERS {
		t.Fatalf("seed %d: the first QuickJoin of its game left %s in phase %v, want waiting for players", seed, name, phase)
	}
	player := game{name: name, seatToken: joined.GetSeatToken(), view: joined.GetView()}
	t.Logf("seed %d: QuickJoin seated the player at seat %d of %s (target score %d, turn timeout %v, bots after %v)",
		seed, seat, name, fillTargetScore, turnTimeout, wait)
	watch := startWatch(ctx, t, client, name, player.seatToken, player.view.GetSequence())

	watch.waitFor(t, func(event *heartsv1.TableEvent) bool { return event.GetRoundStarted() != nil })
	// The bots' joins and the deal are one commit, so they arrive together.
	if elapsed := time.Since(asked); elapsed < wait-50*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("seed %d: the game started %v after the QuickJoin; want after the wait of %v, within 5 s", seed,
			elapsed.Round(time.Millisecond), wait)
	}
	var botSeats []int32
	for _, message := range watch.received() {
		if _, ok := presenceOf(message); ok {
			continue // checked below, with the whole stream
		}
		event := message.GetEvent()
		if event.GetRoundStarted() != nil {
			if got := event.GetRoundStarted().GetRoundNumber(); got != 1 {
				t.Errorf("seed %d: the first round_started is of round %d, want 1", seed, got)
			}
			break
		}
		joinedEvent := event.GetPlayerJoined()
		if message.GetSnapshot() != nil || joinedEvent == nil {
			t.Errorf("seed %d: before round_started the stream delivered %v, want only player_joined", seed, message)
			continue
		}
		if joinedEvent.BotLevel == nil || joinedEvent.GetBotLevel() != heartsv1.BotLevel_BOT_LEVEL_HEURISTIC {
			t.Errorf("seed %d: player_joined at seat %d (%q) has bot_level set %v (%v), want a heuristic bot", seed,
				joinedEvent.GetSeat(), joinedEvent.GetPlayerDisplayName(), joinedEvent.BotLevel != nil, joinedEvent.GetBotLevel())
		}
		botSeats = append(botSeats, joinedEvent.GetSeat())
	}
	slices.Sort(botSeats)
	if want := slices.DeleteFunc([]int32{0, 1, 2, 3}, func(s int32) bool { return s == seat }); !slices.Equal(botSeats, want) {
		t.Fatalf("seed %d: bots joined seats %v before the deal, want the empty seats %v", seed, botSeats, want)
	}

	view := getView(ctx, t, client, name, player.seatToken)
	table := view.GetTable()
	if len(view.GetHand()) != 13 || table.GetRoundNumber() != 1 {
		t.Fatalf("seed %d: after round_started the player holds %d cards in round %d, want 13 in round 1", seed,
			len(view.GetHand()), table.GetRoundNumber())
	}
	if phase := table.GetPhase(); phase != heartsv1.Phase_PHASE_PASSING && phase != heartsv1.Phase_PHASE_PLAYING {
		t.Fatalf("seed %d: after round_started %s is in phase %v, want passing or playing", seed, name, phase)
	}
	for _, s := range table.GetSeats() {
		switch {
		case s.GetSeat() == seat:
			if s.GetOccupant() != heartsv1.SeatOccupant_SEAT_OCCUPANT_HUMAN || s.GetPlayerDisplayName() != "go alone" {
				t.Errorf("seed %d: the player's seat %d is %v %q, want the player", seed, seat, s.GetOccupant(), s.GetPlayerDisplayName())
			}
		case s.GetOccupant() != heartsv1.SeatOccupant_SEAT_OCCUPANT_BOT ||
			s.GetBotLevel() != heartsv1.BotLevel_BOT_LEVEL_HEURISTIC || s.GetStandIn():
			t.Errorf("seed %d: seat %d is %v at level %v (stand-in %v), want a heuristic bot of the table", seed,
				s.GetSeat(), s.GetOccupant(), s.GetBotLevel(), s.GetStandIn())
		}
	}
	if got := table.GetRules().GetTargetScore(); got != fillTargetScore {
		t.Errorf("seed %d: %s has target score %d, want the %d asked for", seed, name, got, fillTargetScore)
	}
	if got := table.GetTurnTimeout().AsDuration(); got != turnTimeout {
		t.Errorf("seed %d: %s has turn timeout %v, want the %v asked for", seed, name, got, turnTimeout)
	}
	if got := table.GetFillWithBotsAfter().AsDuration(); got != wait {
		t.Errorf("seed %d: %s has fill_with_bots_after %v, want the %v asked for", seed, name, got, wait)
	}

	moves := 0
	for view.GetTable().GetPhase() != heartsv1.Phase_PHASE_GAME_OVER {
		if moves++; moves > 2000 {
			t.Fatalf("seed %d: no game over at %s after 2000 moves", seed, name)
		}
		view = move(ctx, t, client, player, view, rng)
	}
	watch.waitFor(t, func(event *heartsv1.TableEvent) bool { return event.GetGameOver() != nil })
	// The player's own stream was open throughout, and the bots that filled the table are never
	// reported: one presence, the player's, connected.
	var presences []presence
	for _, message := range watch.received() {
		if p, ok := presenceOf(message); ok {
			presences = append(presences, p)
		}
	}
	if want := []presence{{seat, true}}; !slices.Equal(presences, want) {
		t.Errorf("seed %d: the stream reported presence %v, want only %v", seed, presences, want)
	}
	table = view.GetTable()
	t.Logf("seed %d: game over at %s after %d rounds and %d moves, totals %v", seed, name,
		table.GetRoundNumber(), moves, table.GetTotalScores())
	if highest := slices.Max(table.GetTotalScores()); highest < fillTargetScore || len(table.GetResult().GetWinners()) == 0 {
		t.Errorf("seed %d: the game ended with totals %v and result %v; want one at the target %d, and winners", seed,
			table.GetTotalScores(), table.GetResult(), fillTargetScore)
	}
}

// TestReactionReachesAnotherSeatAndChangesNothing seats two players with two bots. Seat 1's
// stream reports both players' presence after its resumed events (seat 0 has no stream open,
// seat 1 this one), then seat 0's first stream opening and its last closing. While seat 1
// watches, seat 0 sends five reactions: seat 1's stream gets a ReactionEvent for each, in order,
// numbered as the table's last event (a reaction is not stored, so it repeats the number of the
// event before it), and the table's etag and sequence stay as they were. A sixth within the
// window is RESOURCE_EXHAUSTED / TOO_MANY_REACTIONS, and the creator token, which has no seat,
// is PERMISSION_DENIED / NOT_A_PLAYER. Deleting the table ends the stream, which keeps the
// stream's order (inSequence) throughout.
func TestReactionReachesAnotherSeatAndChangesNothing(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	const sender, watching = 0, 1
	created := createTable(ctx, t, client, seed, sender, watching)
	name := created.GetView().GetTable().GetName()
	tokens := make([]string, 2)
	var joinedFirst int64 // the sequence after the first join, before the deal
	for seat := range int32(2) {
		joined, err := client.JoinTable(ctx, &heartsv1.JoinTableRequest{
			Name:              name,
			Seat:              proto.Int32(seat),
			PlayerDisplayName: fmt.Sprintf("go reactions %d", seat),
			RequestId:         requestID(t),
		})
		if err != nil {
			t.Fatalf("seed %d: JoinTable %s seat %d: %v", seed, name, seat, describe(err))
		}
		if seat == sender {
			joinedFirst = joined.GetView().GetSequence()
		}
		tokens[seat] = joined.GetSeatToken()
	}

	// The stream replays the second join and the deal; once round_started has arrived it is
	// live (the server subscribes before it reads), so it cannot miss a reaction, which is sent
	// only to the streams open at the time.
	watch := startWatch(ctx, t, client, name, tokens[watching], joinedFirst)
	watch.waitFor(t, func(event *heartsv1.TableEvent) bool { return event.GetRoundStarted() != nil })
	isPresence := func(seat int32, connected bool) func(*heartsv1.TableEvent) bool {
		return func(event *heartsv1.TableEvent) bool {
			changed := event.GetPresenceChanged()
			return changed != nil && changed.GetSeat() == seat && changed.GetConnected() == connected
		}
	}
	// The opening presence follows the resumed events (round_started among them).
	opened := max(watch.waitFor(t, isPresence(sender, false)), watch.waitFor(t, isPresence(watching, true)))
	if got, want := openingPresence(t, seed, watch.received(), sender, watching), []presence{{sender, false}, {watching, true}}; !slices.Equal(got, want) {
		t.Errorf("seed %d: seat %d's stream starts with presence %v, want %v", seed, watching, got, want)
	}

	// Seat 0's first stream opens (once it has its own presence, its lease is held), then closes.
	senderCtx, hangUp := context.WithCancel(ctx)
	defer hangUp()
	senderWatch := startWatch(senderCtx, t, client, name, tokens[sender], joinedFirst)
	senderWatch.waitFor(t, isPresence(sender, true))
	opened = watch.waitFrom(t, opened+1, isPresence(sender, true))
	hangUp()
	watch.waitFrom(t, opened+1, isPresence(sender, false))
	before := getView(ctx, t, client, name, tokens[sender])

	sent := []heartsv1.Reaction{
		heartsv1.Reaction_REACTION_THUMBS_UP,
		heartsv1.Reaction_REACTION_CLAP,
		heartsv1.Reaction_REACTION_LAUGH,
		heartsv1.Reaction_REACTION_WOW,
		heartsv1.Reaction_REACTION_WAVE,
	}
	react := func(token string, reaction heartsv1.Reaction) error {
		_, err := client.SendReaction(hearts.WithToken(ctx, token), &heartsv1.SendReactionRequest{Name: name, Reaction: reaction})
		return err
	}
	for i, reaction := range sent {
		if err := react(tokens[sender], reaction); err != nil {
			t.Fatalf("seed %d: reaction %d of seat %d (%v): %v", seed, i+1, sender, reaction, describe(err))
		}
	}
	refusals := []struct {
		what, token string
		code        codes.Code
		reason      string
	}{
		{"a sixth reaction within the window", tokens[sender], codes.ResourceExhausted, "TOO_MANY_REACTIONS"},
		{"a reaction with the creator token", created.GetCreatorToken(), codes.PermissionDenied, "NOT_A_PLAYER"},
	}
	for _, refusal := range refusals {
		got := decodeError(t, react(refusal.token, heartsv1.Reaction_REACTION_THINKING))
		if got.code != refusal.code || got.info.GetDomain() != "hearts.v1" || got.info.GetReason() != refusal.reason {
			t.Errorf("seed %d: %s: %v %s/%s, want %v hearts.v1/%s", seed, refusal.what, got.code,
				got.info.GetDomain(), got.info.GetReason(), refusal.code, refusal.reason)
		}
	}

	watch.waitFor(t, func(event *heartsv1.TableEvent) bool { return event.GetReaction().GetReaction() == sent[len(sent)-1] })
	after := getView(ctx, t, client, name, tokens[sender])
	if after.GetTable().GetEtag() != before.GetTable().GetEtag() || after.GetSequence() != before.GetSequence() {
		t.Errorf("seed %d: the reactions moved the table from etag %q, sequence %d to etag %q, sequence %d; want no change",
			seed, before.GetTable().GetEtag(), before.GetSequence(), after.GetTable().GetEtag(), after.GetSequence())
	}

	deleteTable(ctx, t, client, name, created.GetCreatorToken())
	messages, streamErr := watch.wait(t)
	if streamErr != nil {
		t.Fatalf("seed %d: the watch stream ended with %v, want a clean end after table_deleted", seed, streamErr)
	}
	last := joinedFirst
	var reactions []*heartsv1.WatchTableResponse
	for i, message := range messages {
		if !inSequence(last, message) {
			t.Errorf("seed %d: message %d (%v) has sequence %d after %d", seed, i, message, message.GetSequence(), last)
		}
		last = message.GetSequence()
		if message.GetEvent().GetReaction() != nil {
			reactions = append(reactions, message)
		}
	}
	if len(messages) == 0 || messages[len(messages)-1].GetEvent().GetTableDeleted() == nil {
		t.Errorf("seed %d: the stream's last message is not table_deleted", seed)
	}
	if len(reactions) != len(sent) {
		t.Fatalf("seed %d: seat %d's stream got %d reactions, want the %d sent", seed, watching, len(reactions), len(sent))
	}
	for i, message := range reactions {
		event := message.GetEvent().GetReaction()
		if event.GetSeat() != sender || event.GetReaction() != sent[i] || message.GetSequence() != before.GetSequence() {
			t.Errorf("seed %d: reaction %d is seat %d's %v with sequence %d; want seat %d's %v with the table's sequence %d",
				seed, i+1, event.GetSeat(), event.GetReaction(), message.GetSequence(), sender, sent[i], before.GetSequence())
		}
	}
}

// TestOnlyAnUnstoredEventRepeatsASequenceNumber checks the order the tests demand of a watch
// stream (inSequence), without a server: a reaction or a presence change may repeat the number
// before it, nothing else may, and nothing goes back.
func TestOnlyAnUnstoredEventRepeatsASequenceNumber(t *testing.T) {
	event := func(sequence int64, event *heartsv1.TableEvent) *heartsv1.WatchTableResponse {
		return &heartsv1.WatchTableResponse{Sequence: sequence, Kind: &heartsv1.WatchTableResponse_Event{Event: event}}
	}
	reaction := &heartsv1.TableEvent{Event: &heartsv1.TableEvent_Reaction{
		Reaction: &heartsv1.ReactionEvent{Reaction: heartsv1.Reaction_REACTION_WAVE},
	}}
	presenceChanged := &heartsv1.TableEvent{Event: &heartsv1.TableEvent_PresenceChanged{
		PresenceChanged: &heartsv1.PresenceChangedEvent{Seat: 1, Connected: true},
	}}
	played := &heartsv1.TableEvent{Event: &heartsv1.TableEvent_CardPlayed{CardPlayed: &heartsv1.CardPlayedEvent{}}}
	snapshot := &heartsv1.WatchTableResponse{Sequence: 7, Kind: &heartsv1.WatchTableResponse_Snapshot{Snapshot: &heartsv1.TableView{}}}
	for _, c := range []struct {
		what    string
		message *heartsv1.WatchTableResponse
		want    bool
	}{
		{"an event numbered after the last", event(8, played), true},
		{"a reaction numbered after the last (the event before it was another seat's)", event(8, reaction), true},
		{"a reaction repeating the last number", event(7, reaction), true},
		{"an event repeating the last number", event(7, played), false},
		{"a snapshot repeating the last number", snapshot, false},
		{"a reaction numbered before the last", event(6, reaction), false},
		{"a presence change repeating the last number", event(7, presenceChanged), true},
		{"a presence change numbered after the last (the event before it was another seat's)", event(8, presenceChanged), true},
		{"a presence change numbered before the last", event(6, presenceChanged), false},
	} {
		if got := inSequence(7, c.message); got != c.want {
			t.Errorf("after sequence 7, %s: inSequence is %v, want %v", c.what, got, c.want)
		}
	}
}

// ---------------------------------------------------------------------------------- the game

// game is a table the test created and the seat it joined.
type game struct {
	name         string
	creatorToken string
	seatToken    string
	view         *heartsv1.TableView // the seat's view right after joining
}

// connect dials HEARTS_SERVER, or skips the test when it is unset.
func connect(t *testing.T) (context.Context, heartsv1.TableServiceClient) {
	t.Helper()
	address := os.Getenv("HEARTS_SERVER")
	if address == "" {
		t.Skip("HEARTS_SERVER is unset; run under scripts/with-server.sh to test against a live server")
	}
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepaliveParams))
	if err != nil {
		t.Fatalf("dial %s: %v", address, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx, heartsv1.NewTableServiceClient(conn)
}

// gameSeed is HEARTS_CONFORMANCE_SEED, or one taken from the clock; either way it is logged.
func gameSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano() & (1<<62 - 1)
	if text := os.Getenv("HEARTS_CONFORMANCE_SEED"); text != "" {
		parsed, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			t.Fatalf("HEARTS_CONFORMANCE_SEED=%q is not an integer", text)
		}
		seed = parsed
	}
	t.Logf("seed %d (rerun with HEARTS_CONFORMANCE_SEED=%d)", seed, seed)
	return seed
}

// newGame creates a table with three heuristic bots and a small target score, and joins the
// remaining seat, which deals the first round. The table is deleted when the test ends.
func newGame(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, seed int64) game {
	t.Helper()
	created := createTable(ctx, t, client, seed, humanSeat)
	name := created.GetView().GetTable().GetName()
	joined, err := client.JoinTable(ctx, &heartsv1.JoinTableRequest{
		Name:              name,
		Seat:              proto.Int32(humanSeat),
		PlayerDisplayName: "go conformance",
		RequestId:         requestID(t),
	})
	if err != nil {
		t.Fatalf("seed %d: JoinTable %s: %v", seed, name, err)
	}
	view := joined.GetView()
	if joined.GetSeat() != humanSeat || view.GetViewerSeat() != humanSeat || len(view.GetHand()) != 13 {
		t.Fatalf("seed %d: JoinTable gave seat %d, viewer seat %d and %d cards; want seat %d with 13 cards",
			seed, joined.GetSeat(), view.GetViewerSeat(), len(view.GetHand()), humanSeat)
	}
	if phase := view.GetTable().GetPhase(); phase != heartsv1.Phase_PHASE_PASSING && phase != heartsv1.Phase_PHASE_PLAYING {
		t.Fatalf("seed %d: after the fourth seat joined the phase is %v, want passing or playing", seed, phase)
	}
	return game{name: name, creatorToken: created.GetCreatorToken(), seatToken: joined.GetSeatToken(), view: view}
}

// createTable creates a table with a small target score and the deck of seed, with heuristic bots
// in every seat but the players' seats. The table is deleted when the test ends.
func createTable(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, seed int64, players ...int32) *heartsv1.CreateTableResponse {
	t.Helper()
	table := &heartsv1.Table{
		DisplayName: "go conformance " + t.Name(),
		Rules:       &heartsv1.Rules{TargetScore: proto.Int32(targetScore)},
		DeckSeed:    proto.Int64(seed),
	}
	for seat := int32(0); seat < 4; seat++ {
		if !slices.Contains(players, seat) {
			table.Seats = append(table.Seats, &heartsv1.Seat{
				Seat:     seat,
				Occupant: heartsv1.SeatOccupant_SEAT_OCCUPANT_BOT,
				BotLevel: heartsv1.BotLevel_BOT_LEVEL_HEURISTIC,
			})
		}
	}
	created, err := client.CreateTable(ctx, &heartsv1.CreateTableRequest{Table: table, RequestId: requestID(t)})
	if err != nil {
		t.Fatalf("seed %d: CreateTable: %v", seed, err)
	}
	name := created.GetView().GetTable().GetName()
	if !strings.HasPrefix(name, "tables/") || created.GetCreatorToken() == "" {
		t.Fatalf("seed %d: CreateTable returned name %q and a creator token of %d bytes",
			seed, name, len(created.GetCreatorToken()))
	}
	t.Cleanup(func() {
		// Tests that delete their table themselves leave NOT_FOUND here, which is fine.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := client.DeleteTable(hearts.WithToken(ctx, created.GetCreatorToken()), &heartsv1.DeleteTableRequest{Name: name})
		if err != nil && status.Code(err) != codes.NotFound {
			t.Errorf("DeleteTable %s: %v", name, err)
		}
	})
	return created
}

// move makes the seat's next move, chosen at random from what its own view offers, and returns
// the view after it. When the seat owes no move (it never should with inline bots, but a client
// may not assume that) it reads the table again instead.
func move(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, g game, view *heartsv1.TableView, rng *rand.Rand) *heartsv1.TableView {
	t.Helper()
	authorized := hearts.WithToken(ctx, g.seatToken)
	legal := view.GetLegalCards()
	switch {
	case view.GetCardsToPass() > 0:
		// While passing, legal_cards are the cards the seat may pass: its hand.
		chosen := slices.Clone(legal)
		rng.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
		chosen = chosen[:view.GetCardsToPass()]
		response, err := client.PassCards(authorized, &heartsv1.PassCardsRequest{
			Name: g.name, Cards: chosen, Etag: view.GetTable().GetEtag(), RequestId: requestID(t),
		})
		if err != nil {
			t.Fatalf("PassCards %s from %s: %v", notations(chosen), notations(view.GetHand()), describe(err))
		}
		return response.GetView()
	case len(legal) > 0:
		chosen := legal[rng.IntN(len(legal))]
		response, err := client.PlayCard(authorized, &heartsv1.PlayCardRequest{
			Name: g.name, Card: chosen, Etag: view.GetTable().GetEtag(), RequestId: requestID(t),
		})
		if err != nil {
			t.Fatalf("PlayCard %s (legal %s): %v", hearts.FormatCard(chosen), notations(legal), describe(err))
		}
		return response.GetView()
	default:
		select {
		case <-ctx.Done():
			t.Fatalf("seat %d waited for its turn until the deadline; last view: %v", humanSeat, view.GetTable())
		case <-time.After(20 * time.Millisecond):
		}
		return getView(ctx, t, client, g.name, g.seatToken)
	}
}

// offSuitCard is a card whose play breaks "follow suit": it is the seat's turn, a suit was led,
// and the seat holds that suit and this card of another.
func offSuitCard(view *heartsv1.TableView) *heartsv1.Card {
	trick := view.GetCurrentTrick().GetCards()
	if len(view.GetLegalCards()) == 0 || len(trick) == 0 {
		return nil
	}
	led := trick[0].GetCard().GetSuit()
	holdsLed := slices.ContainsFunc(view.GetHand(), func(c *heartsv1.Card) bool { return c.GetSuit() == led })
	if !holdsLed {
		return nil
	}
	for _, c := range view.GetHand() {
		if c.GetSuit() != led {
			return c
		}
	}
	return nil
}

func getView(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, name, token string) *heartsv1.TableView {
	t.Helper()
	response, err := client.GetTable(hearts.WithToken(ctx, token), &heartsv1.GetTableRequest{Name: name})
	if err != nil {
		t.Fatalf("GetTable %s: %v", name, describe(err))
	}
	return response.GetView()
}

func deleteTable(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, name, creatorToken string) {
	t.Helper()
	if _, err := client.DeleteTable(hearts.WithToken(ctx, creatorToken), &heartsv1.DeleteTableRequest{Name: name}); err != nil {
		t.Fatalf("DeleteTable %s: %v", name, describe(err))
	}
}

// requestID is a fresh AIP-155 request id; the retry-safety itself is the server tests' business.
func requestID(t *testing.T) string {
	t.Helper()
	var b [16]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40 // a version-4 UUID
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ---------------------------------------------------------------------------------- the stream

// watcher collects one WatchTable stream in the background.
type watcher struct {
	mu       sync.Mutex
	messages []*heartsv1.WatchTableResponse
	arrived  chan struct{} // signalled (not closed) after each message
	ended    chan struct{} // closed when the stream ends
	err      error         // nil when the stream ended cleanly (io.EOF)
}

// startWatch watches the table with the seat's token from just after sequence `after`, so that no
// event between the join and the watch is lost.
func startWatch(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, name, token string, after int64) *watcher {
	t.Helper()
	stream, err := client.WatchTable(hearts.WithToken(ctx, token), &heartsv1.WatchTableRequest{
		Name:          name,
		AfterSequence: proto.Int64(after),
	})
	if err != nil {
		t.Fatalf("WatchTable %s: %v", name, describe(err))
	}
	w := &watcher{arrived: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		for {
			message, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					w.mu.Lock()
					w.err = err
					w.mu.Unlock()
				}
				return
			}
			w.mu.Lock()
			w.messages = append(w.messages, message)
			w.mu.Unlock()
			select {
			case w.arrived <- struct{}{}:
			default:
			}
		}
	}()
	return w
}

// waitFor waits until the stream has delivered an event that satisfies want, and returns its
// index among the stream's messages.
func (w *watcher) waitFor(t *testing.T, want func(*heartsv1.TableEvent) bool) int {
	t.Helper()
	return w.waitFrom(t, 0, want)
}

// waitFrom waits until the stream has delivered, as its message `from` or a later one, an event
// that satisfies want, and returns that message's index.
func (w *watcher) waitFrom(t *testing.T, from int, want func(*heartsv1.TableEvent) bool) int {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		found := -1
		if from < len(w.messages) {
			found = slices.IndexFunc(w.messages[from:], func(m *heartsv1.WatchTableResponse) bool {
				return m.GetEvent() != nil && want(m.GetEvent())
			})
		}
		w.mu.Unlock()
		if found >= 0 {
			return from + found
		}
		select {
		case <-w.arrived:
		case <-w.ended:
			t.Fatalf("the watch stream ended (%v) before the expected event", w.err)
		case <-deadline:
			t.Fatalf("the expected event did not arrive on the watch stream within 10 s")
		}
	}
}

// received is what the stream has delivered so far.
func (w *watcher) received() []*heartsv1.WatchTableResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.messages)
}

// wait waits for the stream to end and returns what it delivered.
func (w *watcher) wait(t *testing.T) ([]*heartsv1.WatchTableResponse, error) {
	t.Helper()
	select {
	case <-w.ended:
	case <-time.After(10 * time.Second):
		t.Fatalf("the watch stream did not end within 10 s of the table's deletion")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.messages, w.err
}

// checkStream checks the messages of a stream that began right after sequence `after` and ran
// until the table was deleted, against the seat's final view of the finished game.
func checkStream(t *testing.T, seed, after int64, messages []*heartsv1.WatchTableResponse, final *heartsv1.TableView) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d: "+format, append([]any{seed}, args...)...)
	}

	// The first round was dealt by the join, before `after`; later rounds start on the stream.
	round := int32(1)
	nextTrick := int32(1)
	var trickCards []*heartsv1.PlayedCard // cards played to the trick in progress
	var tricks []*heartsv1.Trick          // the completed tricks of the round
	var scores []*heartsv1.RoundScore
	var gameOver *heartsv1.GameOverEvent
	totals := make([]int32, 4)
	last := after
	deleted := false
	var presences []presence

	for i, message := range messages {
		if !inSequence(last, message) {
			fail("message %d has sequence %d after %d; sequences must grow", i, message.GetSequence(), last)
		}
		last = message.GetSequence()
		if message.GetSnapshot() != nil {
			fail("message %d is a snapshot: the stream could not resume after %d, so events were lost", i, after)
			continue
		}
		if deleted {
			fail("message %d came after table_deleted", i)
		}
		event := message.GetEvent()
		switch {
		case event.GetRoundStarted() != nil:
			if got := event.GetRoundStarted().GetRoundNumber(); got != round+1 || len(scores) != int(round) {
				fail("round_started %d after %d scored rounds, in round %d", got, len(scores), round)
			}
			round = event.GetRoundStarted().GetRoundNumber()
			nextTrick = 1
			tricks = nil
		case event.GetCardPlayed() != nil:
			played := event.GetCardPlayed()
			if played.GetTrickNumber() != nextTrick {
				fail("round %d: card_played %s for trick %d while trick %d is in progress",
					round, hearts.FormatCard(played.GetCard()), played.GetTrickNumber(), nextTrick)
			}
			trickCards = append(trickCards, &heartsv1.PlayedCard{Seat: played.GetSeat(), Card: played.GetCard()})
		case event.GetTrickWon() != nil:
			trick := event.GetTrickWon().GetTrick()
			if trick.GetNumber() != nextTrick {
				fail("round %d: trick_won for trick %d, want trick %d", round, trick.GetNumber(), nextTrick)
			}
			if !(trick.Winner != nil) || len(trick.GetCards()) != 4 {
				fail("round %d trick %d: winner set %v with %d cards, want a winner and 4 cards",
					round, trick.GetNumber(), (trick.Winner != nil), len(trick.GetCards()))
			}
			if !samePlayedCards(trick.GetCards(), trickCards) {
				fail("round %d trick %d: trick_won holds %v but the stream's card_played events were %v",
					round, trick.GetNumber(), trick.GetCards(), trickCards)
			}
			trickCards = nil
			tricks = append(tricks, trick)
			nextTrick++
		case event.GetRoundScored() != nil:
			score := event.GetRoundScored().GetScore()
			if score.GetRoundNumber() != round {
				fail("round_scored for round %d in round %d", score.GetRoundNumber(), round)
			}
			if len(tricks) != 13 {
				fail("round %d was scored after %d trick_won events, want 13", round, len(tricks))
			}
			checkRoundPoints(fail, round, score, tricks)
			for seat := range totals {
				totals[seat] += score.GetPoints()[seat]
			}
			if !slices.Equal(score.GetTotalScores(), totals) {
				fail("round %d: total_scores %v, want the sum of the rounds' points %v", round, score.GetTotalScores(), totals)
			}
			scores = append(scores, score)
		case event.GetGameOver() != nil:
			gameOver = event.GetGameOver()
			if len(scores) != int(round) {
				fail("game_over after %d round_scored events in round %d", len(scores), round)
			}
		case event.GetTableDeleted() != nil:
			deleted = true
		case event.GetPresenceChanged() != nil:
			p, _ := presenceOf(message)
			presences = append(presences, p)
		}
	}

	// The seat is the one player, and its stream was open throughout: the stream reports it
	// connected once, after the resumed events, and nothing else (never a bot).
	if want := []presence{{humanSeat, true}}; !slices.Equal(presences, want) {
		fail("the stream reported presence %v, want only %v", presences, want)
	}

	table := final.GetTable()
	switch {
	case gameOver == nil:
		fail("the stream delivered no game_over event")
	case !deleted:
		fail("the stream ended without a table_deleted event")
	default:
		if !slices.Equal(gameOver.GetTotalScores(), table.GetTotalScores()) {
			fail("game_over total_scores %v, GetTable total_scores %v", gameOver.GetTotalScores(), table.GetTotalScores())
		}
		if !slices.Equal(gameOver.GetTotalScores(), totals) {
			fail("game_over total_scores %v, sum of round_scored points %v", gameOver.GetTotalScores(), totals)
		}
		if !proto.Equal(gameOver.GetResult(), table.GetResult()) {
			fail("game_over result %v, GetTable result %v", gameOver.GetResult(), table.GetResult())
		}
	}
	if int(table.GetRoundNumber()) != len(scores) {
		fail("the stream scored %d rounds, GetTable says round %d", len(scores), table.GetRoundNumber())
	}
	history := final.GetScoreHistory()
	if len(history) != len(scores) {
		fail("GetTable score_history has %d rounds, the stream scored %d", len(history), len(scores))
	}
	for i := range min(len(history), len(scores)) {
		view, event := history[i], scores[i]
		if view.GetRoundNumber() != event.GetRoundNumber() ||
			!slices.Equal(view.GetPoints(), event.GetPoints()) ||
			!slices.Equal(view.GetTotalScores(), event.GetTotalScores()) {
			fail("GetTable score_history[%d] %v differs from the stream's round_scored %v", i, view, event)
		}
		if (view.MoonShooter == nil) != (event.MoonShooter == nil) || view.GetMoonShooter() != event.GetMoonShooter() {
			fail("round %d: the stream's round_scored has moon_shooter set %v (%d), GetTable score_history set %v (%d)",
				event.GetRoundNumber(), event.MoonShooter != nil, event.GetMoonShooter(), view.MoonShooter != nil, view.GetMoonShooter())
		}
	}
	if highest := slices.Max(table.GetTotalScores()); highest < targetScore {
		fail("the game ended with totals %v, none at the target %d", table.GetTotalScores(), targetScore)
	}
}

// inSequence reports whether a watch stream may deliver message after one numbered last: numbers
// grow, except that an unstored event (a ReactionEvent, a PresenceChangedEvent), which has no
// number of its own, repeats the number of the event before it.
func inSequence(last int64, message *heartsv1.WatchTableResponse) bool {
	sequence := message.GetSequence()
	unstored := message.GetEvent().GetReaction() != nil || message.GetEvent().GetPresenceChanged() != nil
	return sequence > last || (sequence == last && unstored)
}

// presence is what a PresenceChangedEvent reports, comparable.
type presence struct {
	seat      int32
	connected bool
}

// presenceOf is the presence a message reports, and whether it is a presence_changed event.
func presenceOf(message *heartsv1.WatchTableResponse) (presence, bool) {
	changed := message.GetEvent().GetPresenceChanged()
	if changed == nil {
		return presence{}, false
	}
	return presence{changed.GetSeat(), changed.GetConnected()}, true
}

// openingPresence is the presence a resumed stream starts with, right after its resumed events:
// the first run of presence_changed messages in messages, one for each of the players' seats
// (humans), in seat order. It fails the test unless there are exactly those seats (never a bot's).
func openingPresence(t *testing.T, seed int64, messages []*heartsv1.WatchTableResponse, humans ...int32) []presence {
	t.Helper()
	start := slices.IndexFunc(messages, func(m *heartsv1.WatchTableResponse) bool {
		_, ok := presenceOf(m)
		return ok
	})
	if start < 0 || start+len(humans) > len(messages) {
		t.Fatalf("seed %d: the stream delivered no presence for each of the players' seats %v: %v", seed, humans, messages)
	}
	var opening []presence
	for _, message := range messages[start : start+len(humans)] {
		p, ok := presenceOf(message)
		if !ok {
			t.Fatalf("seed %d: the stream's opening presence is cut short by %v; want one for each of seats %v", seed, message, humans)
		}
		opening = append(opening, p)
	}
	slices.SortFunc(opening, func(a, b presence) int { return int(a.seat - b.seat) })
	seats := make([]int32, len(opening))
	for i, p := range opening {
		seats[i] = p.seat
	}
	if !slices.Equal(seats, humans) {
		t.Fatalf("seed %d: the stream's opening presence reports seats %v, want the players' seats %v", seed, seats, humans)
	}
	return opening
}

// checkRoundPoints checks a round's points against its tricks under the default rules (no
// bonuses): each seat scores the points of the tricks it won, unless someone shot the moon.
func checkRoundPoints(fail func(string, ...any), round int32, score *heartsv1.RoundScore, tricks []*heartsv1.Trick) {
	taken := make([]int32, 4)
	for _, trick := range tricks {
		taken[trick.GetWinner()] += trick.GetPoints()
	}
	want := taken
	if score.MoonShooter != nil {
		want = []int32{26, 26, 26, 26}
		want[score.GetMoonShooter()] = 0
	}
	if !slices.Equal(score.GetPoints(), want) {
		fail("round %d: points %v, but the tricks won (moon shooter set: %v) make %v",
			round, score.GetPoints(), (score.MoonShooter != nil), want)
	}
}

// ---------------------------------------------------------------------------------- errors

// callError is a failed call as a client sees it.
type callError struct {
	code      codes.Code
	info      *errdetails.ErrorInfo
	rejection *heartsv1.MoveRejection
}

// decodeError reads the status code and the google.rpc.Status details of a failed call.
func decodeError(t *testing.T, err error) callError {
	t.Helper()
	if err == nil {
		t.Fatalf("the call succeeded, want an error")
	}
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("not a gRPC status error: %v", err)
	}
	got := callError{code: st.Code()}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			got.info = d
		case *heartsv1.MoveRejection:
			got.rejection = d
		case error:
			t.Errorf("a status detail could not be decoded: %v", d)
		}
	}
	if got.info == nil {
		t.Fatalf("%v %q carries no google.rpc.ErrorInfo", st.Code(), st.Message())
	}
	return got
}

// describe is an error with its ErrorInfo reason, for failure messages.
func describe(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			return fmt.Sprintf("%v %s: %s", st.Code(), info.GetReason(), st.Message())
		}
	}
	return err.Error()
}

// ---------------------------------------------------------------------------------- tokens

// forgeToken makes a token in the server's format (v1.<claims>.<signature>) for the seat, signed
// with a secret the server does not have.
func forgeToken(t *testing.T, tableName string, seat int32) string {
	t.Helper()
	claims, err := json.Marshal(map[string]any{
		"t": strings.TrimPrefix(tableName, "tables/"),
		"s": seat,
		"e": 0,
		"x": time.Now().Add(time.Hour).Unix(),
	})
	if err != nil {
		t.Fatal(err)
	}
	body := base64.RawURLEncoding.EncodeToString(claims)
	mac := hmac.New(sha256.New, []byte("not-the-server-secret-0123456789"))
	mac.Write([]byte(body))
	return "v1." + body + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// tamperSignature keeps a real token's claims and replaces its signature.
func tamperSignature(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("the seat token has %d dot-separated parts; this test assumes v1.<claims>.<signature>", len(parts))
	}
	signature := []byte(parts[2])
	for i := range signature {
		signature[i] = 'A'
	}
	return parts[0] + "." + parts[1] + "." + string(signature)
}

// ---------------------------------------------------------------------------------- cards

// notation writes a card as the project does: rank then suit (2C, TD, QS, AH).
func notations(cards []*heartsv1.Card) string {
	words := make([]string, len(cards))
	for i, c := range cards {
		words[i] = hearts.FormatCard(c)
	}
	return "[" + strings.Join(words, " ") + "]"
}

func sameCards(a, b []*heartsv1.Card) bool {
	return slices.EqualFunc(a, b, func(x, y *heartsv1.Card) bool { return proto.Equal(x, y) })
}

func samePlayedCards(a, b []*heartsv1.PlayedCard) bool {
	return slices.EqualFunc(a, b, func(x, y *heartsv1.PlayedCard) bool { return proto.Equal(x, y) })
}
