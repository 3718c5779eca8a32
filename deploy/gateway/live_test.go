package main

// Tests against a live hearts-gateway (HEARTS_GATEWAY) in front of a live hearts-server
// (HEARTS_SERVER), as with-gateway.sh starts them: REST from the google.api.http annotations,
// CORS preflights, the health endpoint, and the end of streams at shutdown. They are skipped
// without those variables; ci.sh always runs them through with-gateway.sh.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

const callTimeout = 15 * time.Second

func liveEnv(t testing.TB, name string) string {
	t.Helper()
	value := os.Getenv(name)
	if value == "" {
		t.Skipf("%s is not set: run through deploy/gateway/with-gateway.sh", name)
	}
	return value
}

func gatewayURL(t testing.TB) string { return "http://" + liveEnv(t, "HEARTS_GATEWAY") }

// call sends one REST request (body: a message as JSON, or nil) and returns the status and body.
func call(t testing.TB, method, url, token string, body proto.Message) (int, []byte) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		data, err := protojson.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		request.Header.Set("Authorization", "Bearer "+token)
	}
	response, data := send(t, request)
	return response.StatusCode, data
}

// send makes the request and returns the response with its whole body (read and closed).
func send(t testing.TB, request *http.Request) (*http.Response, []byte) {
	t.Helper()
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatalf("%s %s: %v", request.Method, request.URL, err)
	}
	defer response.Body.Close()
	data, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatalf("%s %s: the answer did not end: %v (HTTP %d, so far %q)", request.Method, request.URL, err, response.StatusCode, data)
	}
	return response, data
}

// decode reads a JSON response body into message, failing the test on anything else.
func decode(t testing.TB, what string, code int, data []byte, message proto.Message) {
	t.Helper()
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", what, code, data)
	}
	if err := protojson.Unmarshal(data, message); err != nil {
		t.Fatalf("%s: %v in %s", what, err, data)
	}
}

// restError checks an error response: its HTTP status, and a google.rpc.Status body with the
// wanted code and a hearts.v1 ErrorInfo with the wanted reason. It returns the status.
func restError(t *testing.T, what string, code int, data []byte, wantHTTP int, wantReason string) *spb.Status {
	t.Helper()
	if code != wantHTTP {
		t.Fatalf("%s: HTTP %d, want %d: %s", what, code, wantHTTP, data)
	}
	st := &spb.Status{}
	if err := protojson.Unmarshal(data, st); err != nil {
		t.Fatalf("%s: the body is not a google.rpc.Status: %v: %s", what, err, data)
	}
	info := &errdetails.ErrorInfo{}
	if len(st.GetDetails()) == 0 || !st.GetDetails()[0].MessageIs(info) {
		t.Fatalf("%s: no ErrorInfo first in the details: %s", what, data)
	}
	if err := st.GetDetails()[0].UnmarshalTo(info); err != nil {
		t.Fatal(err)
	}
	if info.GetDomain() != "hearts.v1" || info.GetReason() != wantReason {
		t.Errorf("%s: ErrorInfo %v, want reason %s", what, info, wantReason)
	}
	return st
}

func TestLiveHealthz(t *testing.T) {
	base := gatewayURL(t)
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || !strings.Contains(body, "SERVING") {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := get(t, base+"/livez"); code != http.StatusOK {
		t.Errorf("/livez: %d %s", code, body)
	}
}

// REST as the annotations in table_service.proto map it: create, read, list, join, a refused
// move with its google.rpc.Status, missing and forged tokens, delete.
func TestLiveREST(t *testing.T) {
	base := gatewayURL(t)
	bots := []*heartsv1.Seat{}
	for seat := int32(1); seat <= 3; seat++ {
		bots = append(bots, &heartsv1.Seat{Seat: seat, Occupant: heartsv1.SeatOccupant_SEAT_OCCUPANT_BOT, BotLevel: heartsv1.BotLevel_BOT_LEVEL_RANDOM})
	}
	// POST /v1/tables, body "table"; the other request fields come from the query.
	code, data := call(t, http.MethodPost, base+"/v1/tables?requestId=rest-create-"+fmt.Sprint(time.Now().UnixNano()), "",
		&heartsv1.Table{DisplayName: "REST through the gateway", Seats: bots})
	created := &heartsv1.CreateTableResponse{}
	decode(t, "POST /v1/tables", code, data, created)
	name := created.GetView().GetTable().GetName()
	if !strings.HasPrefix(name, "tables/") || created.GetCreatorToken() == "" {
		t.Fatalf("created %s", data)
	}
	// Zero values are written out (vanguard's default JSON: EmitUnpopulated), so REST callers
	// find seat 0 as "seat": 0 rather than missing.
	if !strings.Contains(string(data), `"seat":0`) {
		t.Errorf("seat 0 missing from %s", data)
	}

	got := &heartsv1.GetTableResponse{}
	code, data = call(t, http.MethodGet, base+"/v1/"+name, "", nil)
	decode(t, "GET /v1/"+name, code, data, got)
	if got.GetView().GetTable().GetDisplayName() != "REST through the gateway" || got.GetView().ViewerSeat != nil {
		t.Errorf("GET: %s", data)
	}

	listed := &heartsv1.ListTablesResponse{}
	code, data = call(t, http.MethodGet, base+"/v1/tables?pageSize=1000&hasFreeSeat=true", "", nil)
	decode(t, "GET /v1/tables", code, data, listed)
	if !slices.ContainsFunc(listed.GetTables(), func(table *heartsv1.Table) bool { return table.GetName() == name }) {
		t.Errorf("the new table (one free seat) is not listed among %d", len(listed.GetTables()))
	}

	joined := &heartsv1.JoinTableResponse{}
	code, data = call(t, http.MethodPost, base+"/v1/"+name+":join", "", &heartsv1.JoinTableRequest{PlayerDisplayName: "REST"})
	decode(t, "POST :join", code, data, joined)
	if joined.GetSeat() != 0 || joined.GetSeatToken() == "" || len(joined.GetView().GetHand()) != 13 {
		t.Fatalf("joined: %s", data)
	}
	token := joined.GetSeatToken()

	// The first round passes, so playing any card now breaks the rules: HTTP 400 with the
	// google.rpc.Status of FAILED_PRECONDITION, its ErrorInfo and MoveRejection.
	card := joined.GetView().GetHand()[0]
	code, data = call(t, http.MethodPost, base+"/v1/"+name+":playCard", token, &heartsv1.PlayCardRequest{Card: card})
	st := restError(t, "a play while passing", code, data, http.StatusBadRequest, "WRONG_PHASE")
	if st.GetCode() != 9 { // FAILED_PRECONDITION
		t.Errorf("code %d, want 9 (FAILED_PRECONDITION): %s", st.GetCode(), data)
	}
	rejection := &heartsv1.MoveRejection{}
	if len(st.GetDetails()) != 2 || st.GetDetails()[1].UnmarshalTo(rejection) != nil || rejection.GetCardsToPass() != 3 {
		t.Errorf("no MoveRejection with 3 cards to pass: %s", data)
	}

	code, data = call(t, http.MethodPost, base+"/v1/"+name+":playCard", "", &heartsv1.PlayCardRequest{Card: card})
	restError(t, "a play without a token", code, data, http.StatusUnauthorized, "TOKEN_MISSING")
	code, data = call(t, http.MethodPost, base+"/v1/"+name+":playCard", token+"x", &heartsv1.PlayCardRequest{Card: card})
	restError(t, "a play with a forged token", code, data, http.StatusUnauthorized, "TOKEN_INVALID")

	passed := &heartsv1.PassCardsResponse{}
	code, data = call(t, http.MethodPost, base+"/v1/"+name+":passCards", token,
		&heartsv1.PassCardsRequest{Cards: joined.GetView().GetLegalCards()[:3]})
	decode(t, "POST :passCards", code, data, passed)
	if !passed.GetView().GetTable().GetSeats()[0].GetHasPassed() {
		t.Errorf("after the pass: %s", data)
	}

	// Watching needs a streaming protocol: REST has none for it (gRPC-Web and Connect do).
	code, data = call(t, http.MethodGet, base+"/v1/"+name+":watch", "", nil)
	if code != http.StatusUnsupportedMediaType {
		t.Errorf("GET :watch: HTTP %d: %s (if REST streaming works now, update docs/api.md)", code, data)
	}

	code, data = call(t, http.MethodDelete, base+"/v1/"+name, token, nil)
	restError(t, "a delete with a seat token", code, data, http.StatusForbidden, "NOT_TABLE_CREATOR")
	code, data = call(t, http.MethodDelete, base+"/v1/"+name, created.GetCreatorToken(), nil)
	decode(t, "DELETE", code, data, &heartsv1.DeleteTableResponse{})
	code, data = call(t, http.MethodGet, base+"/v1/"+name, "", nil)
	restError(t, "GET after the delete", code, data, http.StatusNotFound, "TABLE_NOT_FOUND")
}

// A request larger than the gateway translates is refused, with RESOURCE_EXHAUSTED.
func TestLiveMessageLimit(t *testing.T) {
	base := gatewayURL(t)
	huge := `{"name": "tables/` + strings.Repeat("x", maxMessageBytes) + `"}`
	status, body := rawCall(t, http.MethodPost, base+heartsv1.TableService_GetTable_FullMethodName, huge, connectJSON)
	// vanguard's own limit ("max buffer size"), before it buffers any more; without it vanguard
	// would read the whole body (up to 4 GiB) and the gRPC layer would refuse it only then.
	if !strings.Contains(body, `"code":"resource_exhausted"`) || !strings.Contains(body, "buffer") {
		t.Errorf("a request over %d bytes: HTTP %d %.300s", maxMessageBytes, status, body)
	}
}

// The server's connections carry at most 1000 calls at once: with 1050 WatchTable streams open
// through the gateway, a GetTable still goes through (on another of its backend connections).
func TestLiveMoreStreamsThanOneBackendConnectionCarries(t *testing.T) {
	const streams, batch = 1050, 50
	base := gatewayURL(t)
	create := connect.NewClient[heartsv1.CreateTableRequest, heartsv1.CreateTableResponse](
		http.DefaultClient, base+heartsv1.TableService_CreateTable_FullMethodName, connect.WithGRPCWeb())
	watch := connect.NewClient[heartsv1.WatchTableRequest, heartsv1.WatchTableResponse](
		http.DefaultClient, base+heartsv1.TableService_WatchTable_FullMethodName, connect.WithGRPCWeb())
	get := connect.NewClient[heartsv1.GetTableRequest, heartsv1.GetTableResponse](
		http.DefaultClient, base+heartsv1.TableService_GetTable_FullMethodName, connect.WithGRPCWeb())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	var open sync.WaitGroup
	defer func() { cancel(); open.Wait() }()

	created, err := create.CallUnary(ctx, connect.NewRequest(&heartsv1.CreateTableRequest{
		Table: &heartsv1.Table{DisplayName: "many watchers"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	request := &heartsv1.WatchTableRequest{Name: created.Msg.GetView().GetTable().GetName()}
	// In batches, as watchers arrive: a burst of more than about a hundred new calls at once meets
	// the server's own overload shedding (CANCELLED past 2 x --max-pending-rpcs waiting calls).
	for opened := 0; opened < streams; opened += batch {
		snapshots := make(chan error, batch)
		for range batch {
			open.Go(func() {
				stream, err := watch.CallServerStream(ctx, connect.NewRequest(request))
				if err != nil {
					snapshots <- err
					return
				}
				defer stream.Close()
				if !stream.Receive() {
					snapshots <- fmt.Errorf("no snapshot: %w", stream.Err())
					return
				}
				snapshots <- nil
				<-ctx.Done()
			})
		}
		for range batch {
			select {
			case err := <-snapshots:
				if err != nil {
					t.Fatalf("after %d streams: %v", opened, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("after %d streams: a stream got no snapshot within 10 s", opened)
			}
		}
	}
	getCtx, getCancel := context.WithTimeout(ctx, 5*time.Second)
	defer getCancel()
	if _, err := get.CallUnary(getCtx, connect.NewRequest(&heartsv1.GetTableRequest{Name: request.GetName()})); err != nil {
		t.Errorf("GetTable with %d streams open: %v", streams, err)
	}
}

func preflight(t *testing.T, url, origin, method, headers string) http.Header {
	t.Helper()
	request, err := http.NewRequest(http.MethodOptions, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Origin", origin)
	request.Header.Set("Access-Control-Request-Method", method)
	// As browsers send them (the Fetch standard): lower case, sorted, comma-separated.
	names := strings.Split(headers, ",")
	slices.Sort(names)
	request.Header.Set("Access-Control-Request-Headers", strings.Join(names, ","))
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	if response.StatusCode != http.StatusNoContent {
		t.Errorf("preflight %s %s: HTTP %d", method, url, response.StatusCode)
	}
	return response.Header
}

func headerList(header http.Header, name string) []string {
	var items []string
	for _, value := range header.Values(name) {
		for item := range strings.SplitSeq(value, ",") {
			items = append(items, strings.ToLower(strings.TrimSpace(item)))
		}
	}
	return items
}

func TestLiveCORS(t *testing.T) {
	base := gatewayURL(t)
	origin := liveEnv(t, "HEARTS_GATEWAY_TEST_ORIGIN")
	for _, c := range []struct{ protocol, path, method, headers string }{
		{"gRPC-Web", "/hearts.v1.TableService/PlayCard", "POST", "authorization,content-type,x-grpc-web,x-user-agent,grpc-timeout"},
		{"Connect", "/hearts.v1.TableService/PlayCard", "POST", "authorization,connect-protocol-version,connect-timeout-ms,content-type"},
		{"REST", "/v1/tables/some-table", "GET", "authorization"},
		{"REST", "/v1/tables/some-table", "DELETE", "authorization"},
	} {
		header := preflight(t, base+c.path, origin, c.method, c.headers)
		if got := header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", c.protocol, got, origin)
		}
		if !slices.Contains(headerList(header, "Access-Control-Allow-Methods"), strings.ToLower(c.method)) {
			t.Errorf("%s: Access-Control-Allow-Methods %q", c.protocol, header.Values("Access-Control-Allow-Methods"))
		}
		allowed := headerList(header, "Access-Control-Allow-Headers")
		for requested := range strings.SplitSeq(c.headers, ",") {
			if !slices.Contains(allowed, requested) {
				t.Errorf("%s: %s not in Access-Control-Allow-Headers %q", c.protocol, requested, allowed)
			}
		}
		if got := header.Get("Access-Control-Max-Age"); got != "7200" {
			t.Errorf("%s: Access-Control-Max-Age %q", c.protocol, got)
		}
		if got := header.Get("Access-Control-Allow-Credentials"); got != "" {
			t.Errorf("%s: credentials allowed: %q", c.protocol, got)
		}
	}

	// Connect's GET requests are for methods marked idempotency_level = NO_SIDE_EFFECTS, and
	// none of hearts.v1 is (a change of it is a breaking one to Buf): a Connect GET is refused,
	// and clients use POST. If this starts to succeed, say so in docs/api.md.
	code, data := call(t, http.MethodGet, base+"/hearts.v1.TableService/GetTable?connect=v1&encoding=json&message=%7B%7D", "", nil)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("a Connect GET: HTTP %d %s, want 405", code, data)
	}

	// Another origin is not allowed: no CORS headers, so the browser refuses the call.
	header := preflight(t, base+"/hearts.v1.TableService/PlayCard", "https://elsewhere.test", "POST", "authorization")
	if got := header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("another origin: Access-Control-Allow-Origin %q", got)
	}

	// The call itself: a gRPC-Web GetTable of no table fails at once; the page may read the
	// status and its details from the headers.
	request, err := http.NewRequest(http.MethodPost, base+"/hearts.v1.TableService/GetTable",
		bytes.NewReader(grpcWebFrame(t, &heartsv1.GetTableRequest{Name: "tables/0000000000000000000000"})))
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Origin", origin)
	request.Header.Set("Content-Type", "application/grpc-web+proto")
	request.Header.Set("X-Grpc-Web", "1")
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(response.Body)
	response.Body.Close()
	if got := response.Header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("gRPC-Web call: Access-Control-Allow-Origin %q", got)
	}
	exposed := headerList(response.Header, "Access-Control-Expose-Headers")
	for _, name := range []string{"grpc-status", "grpc-message", "grpc-status-details-bin"} {
		if !slices.Contains(exposed, name) {
			t.Errorf("gRPC-Web call: %s not in Access-Control-Expose-Headers %q", name, exposed)
		}
	}
	status := response.Header.Get("Grpc-Status")
	if status == "" && !bytes.Contains(body, []byte("grpc-status:5")) {
		t.Errorf("gRPC-Web call: no NOT_FOUND status in headers %v or body %q", response.Header, body)
	} else if status != "" && status != "5" {
		t.Errorf("gRPC-Web call: grpc-status %s, want 5 (NOT_FOUND)", status)
	}
}

func grpcWebFrame(t *testing.T, message proto.Message) []byte {
	t.Helper()
	data, err := proto.Marshal(message)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5, 5+len(data))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(data)))
	return append(frame, data...)
}

// A gateway that shuts down ends its WatchTable streams at once with UNAVAILABLE and the
// server's own reason for it, SHUTTING_DOWN, so that clients resume as after a server restart.
func TestLiveShutdownEndsStreamsWithShuttingDown(t *testing.T) {
	base, stop := startGateway(t, testConfig(liveEnv(t, "HEARTS_SERVER")))
	create := connect.NewClient[heartsv1.CreateTableRequest, heartsv1.CreateTableResponse](
		http.DefaultClient, base+heartsv1.TableService_CreateTable_FullMethodName, connect.WithGRPCWeb())
	watch := connect.NewClient[heartsv1.WatchTableRequest, heartsv1.WatchTableResponse](
		http.DefaultClient, base+heartsv1.TableService_WatchTable_FullMethodName, connect.WithGRPCWeb())
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()

	created, err := create.CallUnary(ctx, connect.NewRequest(&heartsv1.CreateTableRequest{
		Table: &heartsv1.Table{DisplayName: "gateway shutdown"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	name := created.Msg.GetView().GetTable().GetName()
	stream, err := watch.CallServerStream(ctx, connect.NewRequest(&heartsv1.WatchTableRequest{Name: name}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Receive() || stream.Msg().GetSnapshot() == nil {
		t.Fatalf("no snapshot first: %v", stream.Err())
	}

	started := time.Now()
	stop()
	for stream.Receive() {
		t.Logf("after the shutdown: %v", stream.Msg())
	}
	err = stream.Err()
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("stream ended with %v, want UNAVAILABLE", err)
	}
	reasons := []string{}
	for _, detail := range err.(*connect.Error).Details() {
		if value, valueErr := detail.Value(); valueErr == nil {
			if info, ok := value.(*errdetails.ErrorInfo); ok {
				reasons = append(reasons, info.GetDomain()+"/"+info.GetReason())
			}
		}
	}
	if !slices.Equal(reasons, []string{"hearts.v1/SHUTTING_DOWN"}) {
		t.Errorf("ErrorInfo reasons %q, want hearts.v1/SHUTTING_DOWN", reasons)
	}
	if elapsed := time.Since(started); elapsed > 3*time.Second {
		t.Errorf("shutdown with an open stream took %s; streams should end at once", elapsed)
	}
}

// A quiet table (three bots and a free seat: the game waits for a player) watched through the
// gateway over the Connect protocol with JSON and heartbeat_interval 5 s: after the snapshot, the
// next message is a heartbeat, within 8 s but not before about 5 s, numbered as the snapshot,
// with the server's clock. What keeps a page's stream alive behind a proxy's idle timeout.
func TestLiveWatchHeartbeatOverConnectJSON(t *testing.T) {
	base := gatewayURL(t)
	create := connect.NewClient[heartsv1.CreateTableRequest, heartsv1.CreateTableResponse](
		http.DefaultClient, base+heartsv1.TableService_CreateTable_FullMethodName, connect.WithProtoJSON())
	watch := connect.NewClient[heartsv1.WatchTableRequest, heartsv1.WatchTableResponse](
		http.DefaultClient, base+heartsv1.TableService_WatchTable_FullMethodName, connect.WithProtoJSON())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	bots := []*heartsv1.Seat{}
	for seat := int32(1); seat <= 3; seat++ {
		bots = append(bots, &heartsv1.Seat{Seat: seat, Occupant: heartsv1.SeatOccupant_SEAT_OCCUPANT_BOT, BotLevel: heartsv1.BotLevel_BOT_LEVEL_RANDOM})
	}
	created, err := create.CallUnary(ctx, connect.NewRequest(&heartsv1.CreateTableRequest{
		Table: &heartsv1.Table{DisplayName: "gateway heartbeats", Seats: bots},
	}))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := watch.CallServerStream(ctx, connect.NewRequest(&heartsv1.WatchTableRequest{
		Name:              created.Msg.GetView().GetTable().GetName(),
		HeartbeatInterval: durationpb.New(5 * time.Second),
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Receive() || stream.Msg().GetSnapshot() == nil {
		t.Fatalf("no snapshot first: %v", stream.Err())
	}
	snapshot := stream.Msg().GetSequence()
	snapshotAt := time.Now()

	next := make(chan *heartsv1.WatchTableResponse, 1)
	go func() {
		defer close(next)
		if stream.Receive() {
			next <- stream.Msg()
		}
	}()
	var message *heartsv1.WatchTableResponse
	select {
	case message = <-next:
	case <-time.After(8 * time.Second):
		t.Fatal("no message within 8 s of the snapshot, want a heartbeat after 5 s")
	}
	if message == nil {
		t.Fatalf("the stream ended after its snapshot: %v", stream.Err())
	}
	waited := time.Since(snapshotAt)
	heartbeat := message.GetHeartbeat()
	if heartbeat == nil {
		t.Fatalf("after the snapshot came %v, want a heartbeat", message)
	}
	if waited < 4*time.Second {
		t.Errorf("the heartbeat came %s after the snapshot, before the 5 s asked for", waited)
	}
	if message.GetSequence() != snapshot {
		t.Errorf("heartbeat sequence %d, want the snapshot's %d", message.GetSequence(), snapshot)
	}
	if skew := time.Since(heartbeat.GetServerTime().AsTime()).Abs(); skew > 3*time.Second {
		t.Errorf("heartbeat server_time %s is %s from now", heartbeat.GetServerTime().AsTime(), skew)
	}
}

// Round trips of one GetTable, directly and through the gateway, for the gateway's overhead:
//
//	deploy/gateway/with-gateway.sh go -C deploy/gateway test -run '^$' -bench GetTable -benchtime 2000x
func BenchmarkGetTable(b *testing.B) {
	server := liveEnv(b, "HEARTS_SERVER")
	base := gatewayURL(b)
	conn, err := grpc.NewClient(server, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	direct := heartsv1.NewTableServiceClient(conn)
	ctx := context.Background()
	created, err := direct.CreateTable(ctx, &heartsv1.CreateTableRequest{Table: &heartsv1.Table{DisplayName: "benchmark"}})
	if err != nil {
		b.Fatal(err)
	}
	name := created.GetView().GetTable().GetName()
	request := &heartsv1.GetTableRequest{Name: name}

	b.Run("gRPC direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := direct.GetTable(ctx, request); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, protocol := range []struct {
		name    string
		options []connect.ClientOption
	}{
		{"gRPC-Web via gateway", []connect.ClientOption{connect.WithGRPCWeb()}},
		{"Connect JSON via gateway", []connect.ClientOption{connect.WithProtoJSON()}},
	} {
		client := connect.NewClient[heartsv1.GetTableRequest, heartsv1.GetTableResponse](
			http.DefaultClient, base+heartsv1.TableService_GetTable_FullMethodName, protocol.options...)
		b.Run(protocol.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := client.CallUnary(ctx, connect.NewRequest(request)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("REST via gateway", func(b *testing.B) {
		for b.Loop() {
			if code, data := call(b, http.MethodGet, base+"/v1/"+name, "", nil); code != http.StatusOK {
				b.Fatalf("HTTP %d: %s", code, data)
			}
		}
	})
}
