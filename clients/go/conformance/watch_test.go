package conformance_test

// hearts.WatchTable against a live server: a stream cut twice while the game goes on resumes to
// exactly the stored events an uncut stream delivers, asking each time for the events after the
// last one delivered; events a resumed stream sends again are skipped; a stream that delivers a
// message starts the count of failures afresh, and too many failures in a row come out as the
// error; a refused stream is not opened again; the iteration ends after the table is deleted;
// hanging up ends the iteration quietly and ends the call. The streams are cut by
// cuttingClient, a wrapper of the generated client.

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hearts-dev/hearts/clients/go/hearts"
	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// quickBackoff keeps the tests' resumes fast; the backoff itself is tested in package hearts.
var quickBackoff = hearts.WithBackoff(10 * time.Millisecond)

// TestResumedWatchDeliversEveryStoredEventOnceThoughCutTwiceMidGame watches a game with three
// bots while the seat passes and plays, through a client whose first two streams fail with
// UNAVAILABLE after 4 and 3 messages, and expects the snapshot and then exactly the stored
// events an uncut stream from the snapshot delivers.
func TestResumedWatchDeliversEveryStoredEventOnceThoughCutTwiceMidGame(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	seatCtx := hearts.WithToken(ctx, game.seatToken)
	flaky := &cuttingClient{TableServiceClient: client, cuts: []int{4, 3}}

	watchCtx, hangUp := context.WithCancel(seatCtx)
	defer hangUp()
	watch := collect(hearts.WatchTable(watchCtx, flaky, &heartsv1.WatchTableRequest{Name: game.name}, quickBackoff))

	// The pass and seven plays stay in the first round, where every move's last event (whose
	// turn it is) is public: the stream delivers view.sequence itself.
	rng := rand.New(rand.NewPCG(uint64(seed), 10))
	view := game.view
	const moves = 8
	resumedAfter := 0 // the number of moves made when the second resume was seen
	for made := 1; made <= moves; made++ {
		view = move(ctx, t, client, game, view, rng)
		watch.waitStored(t, seed, view.GetSequence())
		if resumedAfter == 0 && len(flaky.asked()) == 3 {
			resumedAfter = made
		}
	}
	t.Logf("seed %d: the streams asked for the events after %v; the second resume came after move %d of %d",
		seed, flaky.asked(), resumedAfter, moves)
	if resumedAfter == 0 || resumedAfter > moves-2 {
		t.Fatalf("seed %d: the watch was resumed twice after move %d of %d (streams asked for %v): not mid-game",
			seed, resumedAfter, moves, flaky.asked())
	}
	last := view.GetSequence()
	hangUp()
	messages, err := watch.wait(t)
	if err != nil {
		t.Fatalf("seed %d: the iteration ended with %v after the hang-up, want no error", seed, describe(err))
	}

	if len(messages) == 0 || messages[0].GetSnapshot() == nil {
		t.Fatalf("seed %d: the watch delivered %s, want a snapshot first", seed, summary(messages))
	}
	snapshot := messages[0].GetSequence()
	reference := append([]int64{snapshot}, storedAfter(seatCtx, t, client, game.name, snapshot, last)...)
	if got := storedUpTo(messages, last); !slices.Equal(got, reference) {
		t.Fatalf("seed %d: the resumed watch delivered the stored sequences\n%v\nan uncut stream\n%v", seed, got, reference)
	}
	// The first stream asked for a snapshot; each later one for what follows the last stored
	// message delivered before it, which the cut streams had moved on from.
	asked, delivered := flaky.asked(), flaky.deliveredBefore()
	if len(asked) != 3 || asked[0] != -1 || asked[1] != delivered[1] || asked[2] != delivered[2] ||
		asked[1] <= snapshot || asked[2] <= asked[1] {
		t.Fatalf("seed %d: the streams asked for the events after %v, with %v delivered before each",
			seed, asked, delivered)
	}
}

// TestResumedWatchSkipsEventsItDeliveredBefore cuts a watch from the table's first event and
// opens the next stream from the first event again, as a server might that sends too much: the
// caller still gets each stored event once.
func TestResumedWatchSkipsEventsItDeliveredBefore(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	seatCtx := hearts.WithToken(ctx, game.seatToken)
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	view := game.view
	for range 4 {
		view = move(ctx, t, client, game, view, rng)
	}
	last := view.GetSequence()
	reference := storedAfter(seatCtx, t, client, game.name, 0, last)

	flaky := &cuttingClient{TableServiceClient: client, cuts: []int{5}, replay: true}
	watchCtx, hangUp := context.WithCancel(seatCtx)
	defer hangUp()
	got := storedUntil(t, seed, hearts.WatchTable(watchCtx, flaky,
		&heartsv1.WatchTableRequest{Name: game.name, AfterSequence: proto.Int64(0)}, quickBackoff), last)
	if !slices.Equal(got, reference) {
		t.Fatalf("seed %d: with a resumed stream sent from the start again, the watch delivered\n%v\nan uncut stream\n%v",
			seed, got, reference)
	}
	if asked := flaky.asked(); len(asked) != 2 || asked[0] != 0 || asked[1] != flaky.deliveredBefore()[1] {
		t.Fatalf("seed %d: the streams asked for the events after %v, with %v delivered before each",
			seed, asked, flaky.deliveredBefore())
	}
}

// TestResumedWatchCountsOnlyFailuresInARow has each of three streams fail after one message,
// with one reconnect allowed: as each delivered a message, the fourth stream opens. The first
// message is the snapshot; each later stream's is the seat's presence, which repeats the
// snapshot's number and still reaches the caller. Then streams that fail before any message
// are opened again only as often as allowed, and the last failure comes out.
func TestResumedWatchCountsOnlyFailuresInARow(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	game := newGame(ctx, t, client, seed)
	// Bounded: a stream that waits for what never comes must not hang the test.
	watchCtx, hangUp := context.WithTimeout(hearts.WithToken(ctx, game.seatToken), 10*time.Second)
	defer hangUp()

	flaky := &cuttingClient{TableServiceClient: client, cuts: []int{1, 1, 1}}
	var messages []*heartsv1.WatchTableResponse
	for message, err := range hearts.WatchTable(watchCtx, flaky, &heartsv1.WatchTableRequest{Name: game.name},
		hearts.WithMaxReconnects(1), quickBackoff) {
		if err != nil {
			t.Fatalf("seed %d: after %d messages from the streams %v: %v", seed, len(messages), flaky.asked(), describe(err))
		}
		if messages = append(messages, message); len(messages) == 4 {
			break
		}
	}
	if len(messages) != 4 || len(flaky.asked()) != 4 || messages[0].GetSnapshot() == nil {
		t.Fatalf("seed %d: %d streams delivered %s, want 4 streams with a message each, a snapshot first",
			seed, len(flaky.asked()), summary(messages))
	}
	for _, message := range messages[1:] {
		if p, ok := presenceOf(message); !ok || p.seat != humanSeat || message.GetSequence() != messages[0].GetSequence() {
			t.Fatalf("seed %d: the streams delivered %s, want seat %d's presence after the snapshot, numbered as it",
				seed, summary(messages), humanSeat)
		}
	}

	failing := &cuttingClient{TableServiceClient: client, cuts: []int{0, 0, 0, 0}}
	items := 0
	for message, err := range hearts.WatchTable(watchCtx, failing, &heartsv1.WatchTableRequest{Name: game.name},
		hearts.WithMaxReconnects(2), quickBackoff) {
		items++
		if message != nil || status.Code(err) != codes.Unavailable {
			t.Fatalf("seed %d: item %d of streams that fail at once: %v, %v; want the UNAVAILABLE", seed, items, message, err)
		}
	}
	if items != 1 || len(failing.asked()) != 3 {
		t.Fatalf("seed %d: %d items from %d streams, want the error once after 3 streams (2 reconnects)",
			seed, items, len(failing.asked()))
	}
}

// TestRefusedWatchIsNotOpenedAgain watches a table that does not exist: NOT_FOUND is the
// request's fault, so it comes out after one stream.
func TestRefusedWatchIsNotOpenedAgain(t *testing.T) {
	ctx, client := connect(t)
	flaky := &cuttingClient{TableServiceClient: client}
	var errs []error
	for message, err := range hearts.WatchTable(ctx, flaky, &heartsv1.WatchTableRequest{Name: "tables/0000nosuchtable00000000"}, quickBackoff) {
		if message != nil {
			t.Fatalf("a table that does not exist sent %v", message)
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 || status.Code(errs[0]) != codes.NotFound || hearts.Reason(errs[0]) != "TABLE_NOT_FOUND" {
		t.Fatalf("the watch of a table that does not exist yielded %v, want NOT_FOUND / TABLE_NOT_FOUND once", errs)
	}
	if asked := flaky.asked(); len(asked) != 1 {
		t.Fatalf("%d streams were opened, want 1", len(asked))
	}
}

// TestHangingUpEndsTheWatchQuietly cancels the context after the first message: the iteration
// ends without an error even with no reconnect allowed (the failed stream is the caller's doing,
// not a failure to report). Stopping the loop ends the call.
func TestHangingUpEndsTheWatchQuietly(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	name := createTable(ctx, t, client, seed, humanSeat).GetView().GetTable().GetName()

	watchCtx, hangUp := context.WithCancel(ctx)
	defer hangUp()
	var received []*heartsv1.WatchTableResponse
	for message, err := range hearts.WatchTable(watchCtx, client, &heartsv1.WatchTableRequest{Name: name}, hearts.WithMaxReconnects(0)) {
		if err != nil {
			t.Fatalf("after the hang-up the iteration yielded %v, want none", describe(err))
		}
		received = append(received, message)
		hangUp()
	}
	if len(received) == 0 || received[0].GetSnapshot() == nil {
		t.Fatalf("the watch delivered %s, want a snapshot first", summary(received))
	}

	flaky := &cuttingClient{TableServiceClient: client}
	for range hearts.WatchTable(ctx, flaky, &heartsv1.WatchTableRequest{Name: name}) {
		break
	}
	if calls := flaky.contexts(); len(calls) != 1 || calls[0].Err() == nil {
		t.Fatalf("after the loop stopped, the stream's context was not done (%d streams)", len(calls))
	}
}

// TestWatchWhoseContextExpiresYieldsDeadlineExceeded gives the watch's context a deadline, which
// a watch should not have: when it passes, the iteration says so (DEADLINE_EXCEEDED as the last
// item) instead of ending as quietly as a hang-up, which the app could not tell from the
// server's end of the stream.
func TestWatchWhoseContextExpiresYieldsDeadlineExceeded(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	name := createTable(ctx, t, client, seed, humanSeat).GetView().GetTable().GetName()

	expiring, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	var received []*heartsv1.WatchTableResponse
	var errs []error
	for message, err := range hearts.WatchTable(expiring, client, &heartsv1.WatchTableRequest{Name: name}) {
		if err != nil {
			errs = append(errs, err)
		} else {
			received = append(received, message)
		}
	}
	if len(received) == 0 || received[0].GetSnapshot() == nil {
		t.Fatalf("the watch delivered %s, want a snapshot first", summary(received))
	}
	if len(errs) != 1 || status.Code(errs[0]) != codes.DeadlineExceeded {
		t.Fatalf("the expired watch yielded %v, want DEADLINE_EXCEEDED once", errs)
	}
}

// TestWatchEndsAfterTheTableIsDeleted deletes the table while it is watched, through a client
// that holds the stream open after the TableDeletedEvent (as a proxy might, that has not passed
// on the stream's end yet): the iteration ends with that event, by itself and without an error.
func TestWatchEndsAfterTheTableIsDeleted(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	created := createTable(ctx, t, client, seed, humanSeat)
	name := created.GetView().GetTable().GetName()
	watchCtx, hangUp := context.WithTimeout(ctx, 10*time.Second)
	defer hangUp()

	holding := &cuttingClient{TableServiceClient: client, hold: true}
	var received []*heartsv1.WatchTableResponse
	for message, err := range hearts.WatchTable(watchCtx, holding, &heartsv1.WatchTableRequest{Name: name}) {
		if err != nil {
			t.Fatalf("seed %d: the watch of a deleted table yielded %v after %s", seed, describe(err), summary(received))
		}
		if received = append(received, message); len(received) == 1 {
			deleteTable(ctx, t, client, name, created.GetCreatorToken())
		}
	}
	if watchCtx.Err() != nil {
		t.Fatalf("seed %d: the watch ended only when its context did, after %s", seed, summary(received))
	}
	if len(received) == 0 || received[len(received)-1].GetEvent().GetTableDeleted() == nil {
		t.Fatalf("seed %d: the watch delivered %s, want the TableDeletedEvent last", seed, summary(received))
	}
}

// ------------------------------------------------------------------------ cutting streams

// cuttingClient is a TableServiceClient whose first WatchTable streams fail with UNAVAILABLE
// after cuts[i] messages, as a dropped connection does. It records what each stream asked for.
type cuttingClient struct {
	heartsv1.TableServiceClient
	cuts   []int
	replay bool // opens every stream after the first from the table's first event
	hold   bool // after a TableDeletedEvent, Recv waits for the call's end, not the server's

	mu         sync.Mutex
	after      []int64 // each stream's after_sequence, -1 when unset
	before     []int64 // the last stored sequence passed on before each stream opened, -1: none
	ctxs       []context.Context
	lastStored int64
}

func (c *cuttingClient) WatchTable(ctx context.Context, req *heartsv1.WatchTableRequest,
	opts ...grpc.CallOption) (grpc.ServerStreamingClient[heartsv1.WatchTableResponse], error) {
	c.mu.Lock()
	opened := len(c.after)
	if len(c.after) == 0 {
		c.lastStored = -1
	}
	if req.AfterSequence != nil {
		c.after = append(c.after, req.GetAfterSequence())
	} else {
		c.after = append(c.after, -1)
	}
	c.before = append(c.before, c.lastStored)
	c.ctxs = append(c.ctxs, ctx)
	c.mu.Unlock()

	if c.replay && opened > 0 {
		req = proto.CloneOf(req)
		req.AfterSequence = proto.Int64(0)
	}
	inner, err := c.TableServiceClient.WatchTable(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	left := -1
	if opened < len(c.cuts) {
		left = c.cuts[opened]
	}
	return &cutStream{ServerStreamingClient: inner, client: c, left: left, hold: c.hold}, nil
}

func (c *cuttingClient) asked() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.after)
}

func (c *cuttingClient) deliveredBefore() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.before)
}

func (c *cuttingClient) contexts() []context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ctxs)
}

// cutStream passes on `left` messages, then fails; with left -1 it never does.
type cutStream struct {
	grpc.ServerStreamingClient[heartsv1.WatchTableResponse]
	client  *cuttingClient
	left    int
	hold    bool
	deleted bool // a TableDeletedEvent was passed on
}

func (s *cutStream) Recv() (*heartsv1.WatchTableResponse, error) {
	if s.left == 0 {
		return nil, status.Error(codes.Unavailable, "the connection dropped (test)")
	}
	if s.hold && s.deleted {
		<-s.Context().Done()
		return nil, status.FromContextError(s.Context().Err()).Err()
	}
	message, err := s.ServerStreamingClient.Recv()
	if err != nil {
		return nil, err
	}
	if s.left > 0 {
		s.left--
	}
	s.deleted = message.GetEvent().GetTableDeleted() != nil
	if sequence, ok := storedSequence(message); ok {
		s.client.mu.Lock()
		s.client.lastStored = max(s.client.lastStored, sequence)
		s.client.mu.Unlock()
	}
	return message, nil
}

// ------------------------------------------------------------------------ reading watches

// storedSequence is the sequence of a snapshot or a stored event: not of a reaction, a presence
// change or a heartbeat, which repeat the number before them.
func storedSequence(message *heartsv1.WatchTableResponse) (int64, bool) {
	event := message.GetEvent()
	if message.GetHeartbeat() != nil || event.GetReaction() != nil || event.GetPresenceChanged() != nil {
		return 0, false
	}
	return message.GetSequence(), true
}

// summary lists messages as kind@sequence, for failure messages.
func summary(messages []*heartsv1.WatchTableResponse) string {
	parts := make([]string, len(messages))
	for i, message := range messages {
		kind := "heartbeat"
		switch {
		case message.GetSnapshot() != nil:
			kind = "snapshot"
		case message.GetEvent() != nil:
			kind = "event"
			event := message.GetEvent().ProtoReflect()
			if field := event.WhichOneof(event.Descriptor().Oneofs().ByName("event")); field != nil {
				kind = string(field.Name())
			}
		}
		parts[i] = fmt.Sprintf("%s@%d", kind, message.GetSequence())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// storedUpTo is the stored sequences among messages, up to last.
func storedUpTo(messages []*heartsv1.WatchTableResponse, last int64) []int64 {
	var sequences []int64
	for _, message := range messages {
		if sequence, ok := storedSequence(message); ok && sequence <= last {
			sequences = append(sequences, sequence)
		}
	}
	return sequences
}

// storedUntil ranges over a watch until it delivers last, and returns the stored sequences.
func storedUntil(t *testing.T, seed int64, watch iter.Seq2[*heartsv1.WatchTableResponse, error], last int64) []int64 {
	t.Helper()
	var sequences []int64
	for message, err := range watch {
		if err != nil {
			t.Fatalf("seed %d: the watch failed after %v: %v", seed, sequences, describe(err))
		}
		if sequence, ok := storedSequence(message); ok {
			if sequences = append(sequences, sequence); sequence >= last {
				return sequences
			}
		}
	}
	t.Fatalf("seed %d: the watch ended after %v, before sequence %d", seed, sequences, last)
	return nil
}

// storedAfter is what a plain stream from after_sequence `after` delivers up to `last`: the
// reference a resumed watch must match. Its numbers grow and it ends at last.
func storedAfter(ctx context.Context, t *testing.T, client heartsv1.TableServiceClient, name string, after, last int64) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := client.WatchTable(ctx, &heartsv1.WatchTableRequest{Name: name, AfterSequence: proto.Int64(after)})
	if err != nil {
		t.Fatalf("WatchTable %s after %d: %v", name, after, describe(err))
	}
	var sequences []int64
	for {
		message, err := stream.Recv()
		if err != nil {
			t.Fatalf("WatchTable %s after %d: %v after %v, before sequence %d", name, after, describe(err), sequences, last)
		}
		sequence, ok := storedSequence(message)
		if !ok {
			continue
		}
		if len(sequences) > 0 && sequence <= sequences[len(sequences)-1] || sequence > last {
			t.Fatalf("WatchTable %s after %d: sequence %d after %v, up to %d", name, after, sequence, sequences, last)
		}
		if sequences = append(sequences, sequence); sequence == last {
			return sequences
		}
	}
}

// collection is a watch ranged over in the background.
type collection struct {
	mu       sync.Mutex
	messages []*heartsv1.WatchTableResponse
	err      error
	arrived  chan struct{} // signalled (not closed) after each message
	ended    chan struct{} // closed when the iteration ends
}

func collect(watch iter.Seq2[*heartsv1.WatchTableResponse, error]) *collection {
	c := &collection{arrived: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		defer close(c.ended)
		for message, err := range watch {
			c.mu.Lock()
			if err != nil {
				c.err = err // the last item
			} else {
				c.messages = append(c.messages, message)
			}
			c.mu.Unlock()
			select {
			case c.arrived <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

// waitStored waits until the watch has delivered a stored message numbered `sequence` or more.
func (c *collection) waitStored(t *testing.T, seed, sequence int64) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		reached := slices.ContainsFunc(c.messages, func(m *heartsv1.WatchTableResponse) bool {
			stored, ok := storedSequence(m)
			return ok && stored >= sequence
		})
		err := c.err
		c.mu.Unlock()
		if reached {
			return
		}
		select {
		case <-c.arrived:
		case <-c.ended:
			t.Fatalf("seed %d: the watch ended (error: %v) before sequence %d", seed, err, sequence)
		case <-deadline:
			t.Fatalf("seed %d: the watch had not delivered sequence %d within 10 s", seed, sequence)
		}
	}
}

// wait waits for the iteration to end and returns its messages and its error.
func (c *collection) wait(t *testing.T) ([]*heartsv1.WatchTableResponse, error) {
	t.Helper()
	select {
	case <-c.ended:
	case <-time.After(5 * time.Second):
		t.Fatalf("the watch did not end within 5 s")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.messages, c.err
}
