package hearts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// The tests below call a real gRPC server in the process (over bufconn) that answers each
// attempt as scripted, with real ErrorInfo details, so that the statuses cross the wire as the
// Hearts server's do. The live test in conformance/ retries against the Hearts server itself.

// errHang scripts an attempt that waits until its call is cancelled or times out.
var errHang = errors.New("hang until the call ends")

// scripted is a TableService whose every attempt answers with the next error of its script, and
// with success once the script is used up. It records what each attempt sent.
type scripted struct {
	heartsv1.UnimplementedTableServiceServer
	arrived chan struct{} // a token per attempt that reached the server

	mu       sync.Mutex
	script   []error
	requests []proto.Message
	tokens   []string // each attempt's authorization metadata
}

func (s *scripted) answer(ctx context.Context, req proto.Message) error {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, proto.Clone(req))
	s.tokens = append(s.tokens, strings.Join(md.Get("authorization"), ","))
	var err error
	if n < len(s.script) {
		err = s.script[n]
	}
	s.mu.Unlock()
	s.arrived <- struct{}{}
	if err == errHang {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

func (s *scripted) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *scripted) GetTable(ctx context.Context, req *heartsv1.GetTableRequest) (*heartsv1.GetTableResponse, error) {
	if err := s.answer(ctx, req); err != nil {
		return nil, err
	}
	return &heartsv1.GetTableResponse{View: &heartsv1.TableView{Sequence: 7}}, nil
}

func (s *scripted) CreateTable(ctx context.Context, req *heartsv1.CreateTableRequest) (*heartsv1.CreateTableResponse, error) {
	if err := s.answer(ctx, req); err != nil {
		return nil, err
	}
	return &heartsv1.CreateTableResponse{CreatorToken: "creator"}, nil
}

func (s *scripted) PlayCard(ctx context.Context, req *heartsv1.PlayCardRequest) (*heartsv1.PlayCardResponse, error) {
	if err := s.answer(ctx, req); err != nil {
		return nil, err
	}
	return &heartsv1.PlayCardResponse{View: &heartsv1.TableView{Sequence: 8}}, nil
}

func (s *scripted) SendReaction(ctx context.Context, req *heartsv1.SendReactionRequest) (*heartsv1.SendReactionResponse, error) {
	if err := s.answer(ctx, req); err != nil {
		return nil, err
	}
	return &heartsv1.SendReactionResponse{}, nil
}

// serve starts a scripted server and returns it with a client that retries with opts.
func serve(t *testing.T, script []error, opts ...RetryOption) (*scripted, heartsv1.TableServiceClient) {
	t.Helper()
	s := &scripted{script: script, arrived: make(chan struct{}, 100)}
	listener := bufconn.Listen(1 << 20)
	server := grpc.NewServer()
	heartsv1.RegisterTableServiceServer(server, s)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	conn, err := grpc.NewClient("passthrough:///scripted",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return listener.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(RetryUnary(opts...)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return s, heartsv1.NewTableServiceClient(conn)
}

// recordWaits has RetryUnary note its waits instead of sleeping them.
func recordWaits(waits *[]time.Duration) RetryOption {
	return func(o *retryOptions) {
		o.wait = func(ctx context.Context, d time.Duration) bool {
			*waits = append(*waits, d)
			return ctx.Err() == nil
		}
	}
}

// failure is a status as the Hearts server sends it: with an ErrorInfo when reason is set.
func failure(t *testing.T, code codes.Code, domain, reason string) error {
	t.Helper()
	st := status.New(code, fmt.Sprintf("%v %s", code, reason))
	if reason == "" {
		return st.Err()
	}
	st, err := st.WithDetails(&errdetails.ErrorInfo{Domain: domain, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func call(ctx context.Context, client heartsv1.TableServiceClient, method string) error {
	var err error
	switch method {
	case "GetTable":
		_, err = client.GetTable(ctx, &heartsv1.GetTableRequest{Name: "tables/t"})
	case "CreateTable":
		_, err = client.CreateTable(ctx, &heartsv1.CreateTableRequest{Table: &heartsv1.Table{}})
	case "PlayCard":
		_, err = client.PlayCard(ctx, &heartsv1.PlayCardRequest{Name: "tables/t"})
	case "SendReaction":
		_, err = client.SendReaction(ctx, &heartsv1.SendReactionRequest{Name: "tables/t"})
	default:
		panic(method)
	}
	return err
}

// sameStatus reports whether got is want as it left the server: code, message and details.
func sameStatus(got, want error) bool {
	return proto.Equal(status.Convert(got).Proto(), status.Convert(want).Proto())
}

// TestOnlyACallThatIsSafeToSendAgainIsRetried checks the retry table of docs/guide.md, method
// by method: a retried failure is followed by a second attempt that succeeds, any other reaches
// the caller unchanged after one attempt.
func TestOnlyACallThatIsSafeToSendAgainIsRetried(t *testing.T) {
	rejection, err := status.New(codes.FailedPrecondition, "follow suit").WithDetails(
		&errdetails.ErrorInfo{Domain: errorDomain, Reason: "MUST_FOLLOW_SUIT"},
		&heartsv1.MoveRejection{LegalCards: []*heartsv1.Card{{Suit: heartsv1.Suit_SUIT_HEARTS, Rank: heartsv1.Rank_RANK_TWO}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		err    error
		retry  bool
	}{
		{"GetTable", failure(t, codes.Unavailable, "", ""), true},
		{"GetTable", failure(t, codes.Unavailable, errorDomain, "STORE_UNAVAILABLE"), true},
		{"GetTable", failure(t, codes.DeadlineExceeded, "", ""), true},
		{"PlayCard", failure(t, codes.Unavailable, "", ""), true},
		{"PlayCard", failure(t, codes.DeadlineExceeded, "", ""), true},
		{"CreateTable", failure(t, codes.ResourceExhausted, errorDomain, "OVERLOADED"), true},
		{"SendReaction", failure(t, codes.ResourceExhausted, errorDomain, "OVERLOADED"), true},
		{"SendReaction", failure(t, codes.Canceled, "", ""), true},
		{"GetTable", failure(t, codes.Canceled, "", ""), true},
		{"PlayCard", failure(t, codes.Aborted, errorDomain, "CONFLICT"), true},
		{"CreateTable", failure(t, codes.Aborted, errorDomain, "CONFLICT"), true},

		{"SendReaction", failure(t, codes.Unavailable, "", ""), false}, // it may have acted
		{"SendReaction", failure(t, codes.DeadlineExceeded, "", ""), false},
		{"SendReaction", failure(t, codes.ResourceExhausted, errorDomain, "TOO_MANY_REACTIONS"), false},
		{"SendReaction", failure(t, codes.Aborted, errorDomain, "CONFLICT"), false},
		{"GetTable", failure(t, codes.Aborted, errorDomain, "CONFLICT"), false},
		{"PlayCard", failure(t, codes.Aborted, errorDomain, "ETAG_MISMATCH"), false},
		{"CreateTable", failure(t, codes.ResourceExhausted, errorDomain, "TOO_MANY_TABLES"), false},
		{"GetTable", failure(t, codes.ResourceExhausted, "", ""), false}, // a message over the size limit
		{"GetTable", failure(t, codes.ResourceExhausted, "example.com", "OVERLOADED"), false},
		{"GetTable", failure(t, codes.Canceled, errorDomain, "CLIENT_CLOSED"), false},
		{"PlayCard", failure(t, codes.InvalidArgument, errorDomain, "INVALID_CARD"), false},
		{"PlayCard", rejection.Err(), false},
		{"GetTable", failure(t, codes.NotFound, errorDomain, "TABLE_NOT_FOUND"), false},
		{"PlayCard", failure(t, codes.Unauthenticated, errorDomain, "TOKEN_INVALID"), false},
		{"GetTable", failure(t, codes.Internal, "", ""), false},
	} {
		var waits []time.Duration
		s, client := serve(t, []error{c.err}, recordWaits(&waits))
		err := call(t.Context(), client, c.method)
		switch {
		case c.retry && (err != nil || s.attempts() != 2 || len(waits) != 1):
			t.Errorf("%s after %v: %v after %d attempts and %d waits, want success after 2 and 1",
				c.method, c.err, err, s.attempts(), len(waits))
		case !c.retry && (!sameStatus(err, c.err) || s.attempts() != 1 || len(waits) != 0):
			t.Errorf("%s after %v: %v after %d attempts and %d waits, want the same error after 1 and 0",
				c.method, c.err, err, s.attempts(), len(waits))
		}
	}
}

// TestTheLastAttemptsErrorComesBackWhenTheRetriesRunOut checks the count of attempts and waits:
// 4 attempts by default, one more than WithMaxRetries otherwise, and 1 with retries switched off.
func TestTheLastAttemptsErrorComesBackWhenTheRetriesRunOut(t *testing.T) {
	var script []error
	for n := 1; n <= 10; n++ {
		script = append(script, status.Errorf(codes.Unavailable, "attempt %d", n))
	}
	for _, c := range []struct {
		opts     []RetryOption
		attempts int
	}{
		{nil, 4},
		{[]RetryOption{WithMaxRetries(0)}, 1},
		{[]RetryOption{WithMaxRetries(1)}, 2},
		{[]RetryOption{WithMaxRetries(6)}, 7},
	} {
		var waits []time.Duration
		s, client := serve(t, script, append(c.opts, recordWaits(&waits))...)
		err := call(t.Context(), client, "PlayCard")
		if s.attempts() != c.attempts || len(waits) != c.attempts-1 || !sameStatus(err, script[c.attempts-1]) {
			t.Errorf("%d options: %v after %d attempts and %d waits, want the error of attempt %d after %d waits",
				len(c.opts), err, s.attempts(), len(waits), c.attempts, c.attempts-1)
		}
	}
}

// TestTheBackoffDoublesUpToFiveSecondsWithJitter checks each wait against the first doubled per
// retry, at most 5 s, times a jitter of 0.5 to 1.
func TestTheBackoffDoublesUpToFiveSecondsWithJitter(t *testing.T) {
	script := make([]error, 20)
	for i := range script {
		script[i] = status.Error(codes.Unavailable, "down")
	}
	for _, first := range []time.Duration{200 * time.Millisecond, 50 * time.Millisecond} {
		var waits []time.Duration
		opts := []RetryOption{WithMaxRetries(9), recordWaits(&waits)}
		if first != 200*time.Millisecond {
			opts = append(opts, WithRetryBackoff(first))
		}
		_, client := serve(t, script, opts...)
		_ = call(t.Context(), client, "GetTable")
		if len(waits) != 9 {
			t.Fatalf("first %v: %d waits, want 9", first, len(waits))
		}
		full := first
		for i, d := range waits {
			if d < full/2 || d >= full {
				t.Errorf("first %v: wait %d was %v, want %v to %v", first, i+1, d, full/2, full)
			}
			full = min(2*full, 5*time.Second)
		}
	}
}

// TestCancelDuringTheBackoffEndsTheCallAtOnce cancels the call's context while it waits (a
// minute's backoff, so at least 2.5 s): the call returns CANCELLED at once, without a retry.
func TestCancelDuringTheBackoffEndsTheCallAtOnce(t *testing.T) {
	s, client := serve(t, []error{status.Error(codes.Unavailable, "down")}, WithRetryBackoff(time.Minute))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-s.arrived
		time.Sleep(50 * time.Millisecond) // into the wait
		cancel()
	}()
	start := time.Now()
	err := call(ctx, client, "PlayCard")
	if status.Code(err) != codes.Canceled || s.attempts() != 1 || time.Since(start) > time.Second {
		t.Errorf("cancelled during the backoff: %v after %d attempts and %v, want Canceled after 1, at once",
			err, s.attempts(), time.Since(start))
	}
}

// TestNoWaitOutlastsTheCallsDeadline gives the call 2 s and the first wait at least 3 s: the call
// returns the attempt's error at once instead of sleeping into its deadline.
func TestNoWaitOutlastsTheCallsDeadline(t *testing.T) {
	down := status.Error(codes.Unavailable, "down")
	s, client := serve(t, []error{down}, WithRetryBackoff(6*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := call(ctx, client, "GetTable")
	if !sameStatus(err, down) || s.attempts() != 1 || time.Since(start) > time.Second {
		t.Errorf("a wait past the deadline: %v after %d attempts and %v, want %v after 1, at once",
			err, s.attempts(), time.Since(start), down)
	}
}

// TestACallTheAppCancelledIsNotRetried cancels the context while the server holds the call: the
// CANCELLED that follows is the app's own, and is not retried.
func TestACallTheAppCancelledIsNotRetried(t *testing.T) {
	var waits []time.Duration
	s, client := serve(t, []error{errHang}, recordWaits(&waits))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-s.arrived
		cancel()
	}()
	err := call(ctx, client, "SendReaction")
	time.Sleep(100 * time.Millisecond) // a retry, were there one, would arrive meanwhile
	if status.Code(err) != codes.Canceled || s.attempts() != 1 || len(waits) != 0 {
		t.Errorf("cancelled by the app: %v after %d attempts and %d waits, want Canceled after 1 and none",
			err, s.attempts(), len(waits))
	}
}

// TestAnAttemptTimeoutRetriesAStuckAttempt has the server hold the first attempt: it times out
// after WithAttemptTimeout, and the second attempt succeeds within the call's own deadline.
func TestAnAttemptTimeoutRetriesAStuckAttempt(t *testing.T) {
	var waits []time.Duration
	s, client := serve(t, []error{errHang}, WithAttemptTimeout(100*time.Millisecond), recordWaits(&waits))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := call(ctx, client, "GetTable"); err != nil || s.attempts() != 2 {
		t.Errorf("a stuck first attempt: %v after %d attempts, want success after 2", err, s.attempts())
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestAnEmptyRequestIDIsFilledOnceOnACopy checks that every attempt of a mutation without a
// request_id sends the same fresh UUID, with the caller's token, and that the caller's request
// is left as it was.
func TestAnEmptyRequestIDIsFilledOnceOnACopy(t *testing.T) {
	var waits []time.Duration
	down := status.Error(codes.Unavailable, "down")
	s, client := serve(t, []error{down, down}, recordWaits(&waits))
	req := &heartsv1.PlayCardRequest{Name: "tables/t", Etag: "e1",
		Card: &heartsv1.Card{Suit: heartsv1.Suit_SUIT_CLUBS, Rank: heartsv1.Rank_RANK_TWO}}
	original := proto.Clone(req)
	if _, err := client.PlayCard(WithToken(t.Context(), "seat-token"), req); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(req, original) {
		t.Errorf("the caller's request was changed: %v, was %v", req, original)
	}
	if s.attempts() != 3 {
		t.Fatalf("%d attempts, want 3", s.attempts())
	}
	id := s.requests[0].(*heartsv1.PlayCardRequest).GetRequestId()
	if !uuidV4.MatchString(id) {
		t.Errorf("filled request_id %q is not a version-4 UUID", id)
	}
	for i, sent := range s.requests {
		want := proto.CloneOf(original.(*heartsv1.PlayCardRequest))
		want.RequestId = id
		if !proto.Equal(sent, want) || s.tokens[i] != "Bearer seat-token" {
			t.Errorf("attempt %d sent %v with authorization %q, want %v with the seat token", i+1, sent, s.tokens[i], want)
		}
	}

	// Another call gets another id.
	if _, err := client.PlayCard(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if again := s.requests[3].(*heartsv1.PlayCardRequest).GetRequestId(); again == id || !uuidV4.MatchString(again) {
		t.Errorf("the next call's request_id %q, want a new UUID (the first was %q)", again, id)
	}
}

// TestARequestIDTheCallerSetIsKept checks that every attempt sends the caller's own request_id.
func TestARequestIDTheCallerSetIsKept(t *testing.T) {
	var waits []time.Duration
	conflict := failure(t, codes.Aborted, errorDomain, "CONFLICT")
	s, client := serve(t, []error{conflict, conflict}, recordWaits(&waits))
	if _, err := client.CreateTable(t.Context(), &heartsv1.CreateTableRequest{RequestId: "the app's id"}); err != nil {
		t.Fatal(err)
	}
	for i, sent := range s.requests {
		if id := sent.(*heartsv1.CreateTableRequest).GetRequestId(); id != "the app's id" {
			t.Errorf("attempt %d sent request_id %q, want the caller's", i+1, id)
		}
	}
}

// TestEveryMethodOfTheServiceIsClassified keeps the table of methods whole as the API grows: each
// unary method is a read, a mutation or SendReaction's kind, a mutation's request (and only
// its) has a request_id to fill, and the stream is left alone.
func TestEveryMethodOfTheServiceIsClassified(t *testing.T) {
	service := heartsv1.File_hearts_v1_table_service_proto.Services().ByName("TableService")
	methods := service.Methods()
	for i := range methods.Len() {
		method := methods.Get(i)
		name := fmt.Sprintf("/%s/%s", service.FullName(), method.Name())
		kind := callKinds[name]
		hasID := method.Input().Fields().ByName(protoreflect.Name("request_id")) != nil
		switch {
		case method.IsStreamingServer() || method.IsStreamingClient():
			if kind != notRetried {
				t.Errorf("%s streams, yet RetryUnary retries it", name)
			}
		case kind == notRetried:
			t.Errorf("%s is missing from callKinds", name)
		case (kind == mutation) != hasID:
			t.Errorf("%s: kind %d, yet its request has a request_id: %v", name, kind, hasID)
		}
	}
	if len(callKinds) != methods.Len()-1 {
		t.Errorf("callKinds names %d methods, the service has %d unary ones", len(callKinds), methods.Len()-1)
	}
}
