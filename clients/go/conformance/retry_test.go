package conformance_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/hearts-dev/hearts/clients/go/hearts"
	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// TestAPlayWhoseAnswerWasLostIsRetriedAndAppliedOnce plays a card through a relay that drops the
// server's answer and then the connection, as a network failing mid-call does. The client, with
// hearts.RetryUnary and the README's reconnect settings, sends the same PlayCard again (the
// request_id it filled in itself, the same on both attempts) and gets the server's remembered
// answer: the card is played once, and the answer is the table as the first attempt left it.
func TestAPlayWhoseAnswerWasLostIsRetriedAndAppliedOnce(t *testing.T) {
	ctx, direct := connect(t)
	seed := gameSeed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 20))
	g := newGame(ctx, t, direct, seed)
	view := g.view
	for moves := 0; view.GetCardsToPass() > 0 || len(view.GetLegalCards()) == 0; moves++ {
		if moves == 20 {
			t.Fatalf("seed %d: no card to play after %d moves; last view: %v", seed, moves, view.GetTable())
		}
		view = move(ctx, t, direct, g, view, rng)
	}

	relay := startRelay(t, os.Getenv("HEARTS_SERVER"))
	var mu sync.Mutex
	var sent []string // the request_id of each PlayCard attempt, as it left the client
	record := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if play, ok := req.(*heartsv1.PlayCardRequest); ok {
			mu.Lock()
			sent = append(sent, play.GetRequestId())
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	reconnect := backoff.DefaultConfig
	reconnect.BaseDelay, reconnect.MaxDelay = 200*time.Millisecond, 5*time.Second
	conn, err := grpc.NewClient(relay.address(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepaliveParams),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnect, MinConnectTimeout: 20 * time.Second}),
		// RetryUnary first: the recorder after it sees every attempt.
		grpc.WithChainUnaryInterceptor(hearts.RetryUnary(), record))
	if err != nil {
		t.Fatalf("dial the relay %s: %v", relay.address(), err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := heartsv1.NewTableServiceClient(conn)
	seatCtx := hearts.WithToken(ctx, g.seatToken)

	// A read opens the connection that the play goes on; then the server's answers are dropped.
	if _, err := client.GetTable(seatCtx, &heartsv1.GetTableRequest{Name: g.name}); err != nil {
		t.Fatalf("GetTable %s through the relay: %v", g.name, describe(err))
	}
	relay.muteAnswers()
	card := view.GetLegalCards()[rng.IntN(len(view.GetLegalCards()))]
	req := &heartsv1.PlayCardRequest{Name: g.name, Card: card, Etag: view.GetTable().GetEtag()}
	type result struct {
		response *heartsv1.PlayCardResponse
		err      error
	}
	done := make(chan result, 1)
	go func() {
		response, err := client.PlayCard(seatCtx, req)
		done <- result{response, err}
	}()

	// The server applies the play; only then does the connection drop.
	holds := func(v *heartsv1.TableView) bool {
		return slices.ContainsFunc(v.GetHand(), func(c *heartsv1.Card) bool { return proto.Equal(c, card) })
	}
	applied := getView(ctx, t, direct, g.name, g.seatToken)
	for holds(applied) {
		select {
		case r := <-done:
			t.Fatalf("PlayCard %s returned while its answers were dropped: %v", hearts.FormatCard(card), describe(r.err))
		case <-ctx.Done():
			t.Fatalf("the server had not applied PlayCard %s by the test's deadline", hearts.FormatCard(card))
		case <-time.After(20 * time.Millisecond):
		}
		applied = getView(ctx, t, direct, g.name, g.seatToken)
	}
	relay.hangUp()

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatalf("PlayCard %s had not returned by the test's deadline after the relay hung up", hearts.FormatCard(card))
	}
	if r.err != nil {
		t.Fatalf("PlayCard %s, retried after the lost answer: %v", hearts.FormatCard(card), describe(r.err))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || sent[0] == "" || sent[0] != sent[1] || req.GetRequestId() != "" {
		t.Errorf("PlayCard attempts sent request ids %q (the caller's request has %q), want the same filled-in id twice",
			sent, req.GetRequestId())
	}
	got := r.response.GetView()
	if got.GetSequence() != applied.GetSequence() || got.GetTable().GetEtag() != applied.GetTable().GetEtag() ||
		!sameCards(got.GetHand(), applied.GetHand()) || len(got.GetHand()) != len(view.GetHand())-1 {
		t.Errorf("the retry's answer: sequence %d, etag %q, hand %s; the table after the play: sequence %d, etag %q, hand %s (before: %s)",
			got.GetSequence(), got.GetTable().GetEtag(), notations(got.GetHand()),
			applied.GetSequence(), applied.GetTable().GetEtag(), notations(applied.GetHand()), notations(view.GetHand()))
	}
	if now := getView(ctx, t, direct, g.name, g.seatToken); now.GetSequence() != applied.GetSequence() {
		t.Errorf("the table moved on from sequence %d to %d after the retry: the play was applied again?",
			applied.GetSequence(), now.GetSequence())
	}
}
