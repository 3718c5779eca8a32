package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// stalledRequest opens a connection, sends a request's headers announcing a body of 100 bytes
// and no body. It returns the connection, to read the answer from.
func stalledRequest(t *testing.T, base, method, path, contentType string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	headers := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: %s\r\nContent-Length: 100\r\n", method, path, contentType)
	if contentType == "application/json" && strings.HasPrefix(path, "/hearts.v1.") {
		headers += "Connect-Protocol-Version: 1\r\n"
	}
	if _, err := io.WriteString(conn, headers+"\r\n"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// A client that announces a body and never sends it holds no stream to the backend (the
// gateway reads the request before it opens one), and the read deadline ends its call. Here
// the backend's one connection carries two calls at once: before, two such requests stalled
// every other call, for as long as their clients kept the connection open.
func TestRequestsThatNeverArriveHoldNoBackendStream(t *testing.T) {
	cfg := testConfig(startHoldingBackend(t, 2))
	cfg.connections = 1
	cfg.readTimeout = time.Second
	base, _ := startGateway(t, cfg)

	var stalled []net.Conn
	for range 2 {
		stalled = append(stalled,
			stalledRequest(t, base, http.MethodPost, heartsv1.TableService_GetTable_FullMethodName, "application/json"),
			stalledRequest(t, base, http.MethodPost, "/v1/tables/x:join", "application/json"))
	}
	time.Sleep(200 * time.Millisecond) // the requests are in
	get := connect.NewClient[heartsv1.GetTableRequest, heartsv1.GetTableResponse](
		http.DefaultClient, base+heartsv1.TableService_GetTable_FullMethodName, connect.WithGRPCWeb())
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := get.CallUnary(ctx, connect.NewRequest(&heartsv1.GetTableRequest{Name: "tables/x"})); err != nil {
		t.Errorf("GetTable with %d requests waiting for their bodies: %v", len(stalled), err)
	}

	// The deadline ends each of them: the gateway answers, or closes the connection.
	for i, conn := range stalled {
		_ = conn.SetReadDeadline(time.Now().Add(cfg.readTimeout + 3*time.Second))
		response, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("request %d: still open %s after its read deadline", i, 3*time.Second)
			continue
		}
		if err == nil {
			t.Logf("request %d: HTTP %d", i, response.StatusCode)
			response.Body.Close()
		}
	}
}

// The read deadline is lifted once the request has arrived: a WatchTable stream outlives it,
// over HTTP/1.1 (gRPC-Web) as over HTTP/2 (gRPC).
func TestStreamsOutliveTheReadDeadline(t *testing.T) {
	var watching atomic.Int64
	cfg := testConfig(startBackend(t, 100, holdingBackend{watching: &watching}))
	cfg.readTimeout = 300 * time.Millisecond
	base, _ := startGateway(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, protocol := range []struct {
		name   string
		client *http.Client
		option connect.ClientOption
	}{
		{"gRPC-Web over HTTP/1.1", http.DefaultClient, connect.WithGRPCWeb()},
		{"gRPC over HTTP/2", h2cClient(), connect.WithGRPC()},
	} {
		watch := connect.NewClient[heartsv1.WatchTableRequest, heartsv1.WatchTableResponse](
			protocol.client, base+heartsv1.TableService_WatchTable_FullMethodName, protocol.option)
		stream, err := watch.CallServerStream(ctx, connect.NewRequest(&heartsv1.WatchTableRequest{Name: "tables/x"}))
		if err != nil {
			t.Fatal(err)
		}
		if !stream.Receive() {
			t.Fatalf("%s: no snapshot: %v", protocol.name, stream.Err())
		}
		time.Sleep(3 * cfg.readTimeout)
		if n := watching.Load(); n != 1 {
			t.Errorf("%s: %d streams open at the backend %s after the request, want 1", protocol.name, n, 3*cfg.readTimeout)
		}
		_ = stream.Close()
		for deadline := time.Now().Add(2 * time.Second); watching.Load() != 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestARequestWithoutABodyOutlivesTheReadDeadline(t *testing.T) {
	// A REST GET has no body: the read deadline must not end it while the backend answers, nor
	// break the keep-alive connection for the requests after it (as it did over HTTP/1.1).
	cfg := testConfig(startBackend(t, 100, slowBackend{delay: 600 * time.Millisecond}))
	cfg.readTimeout = 200 * time.Millisecond
	base, _ := startGateway(t, cfg)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}} // one connection
	for i := range 2 {
		response, err := client.Get(base + "/v1/tables/x")
		if err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
		body, _ := io.ReadAll(response.Body)
		response.Body.Close()
		if response.StatusCode != http.StatusOK {
			t.Fatalf("GET %d: %d %s, want 200 after the backend's 600 ms", i, response.StatusCode, body)
		}
	}
}

func TestAChunkedBodyOnACallThatTakesNoneIsRefused(t *testing.T) {
	base, _ := startGateway(t, testConfig(startHoldingBackend(t, 100)))
	request, err := http.NewRequest(http.MethodGet, base+"/v1/tables/x", io.NopCloser(strings.NewReader(`{"x":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	request.ContentLength = -1 // sent chunked
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(response.Body)
	response.Body.Close()
	if response.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "INVALID_REQUEST") {
		t.Fatalf("got %d %s, want 400 INVALID_REQUEST", response.StatusCode, body)
	}
}

// h2cClient speaks HTTP/2 without TLS, as gRPC clients of the gateway do.
func h2cClient() *http.Client {
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: protocols}}
}

// rawCall sends a request with the given body and headers and returns the status and body. It
// fails the test if the answer does not end within 5 s.
func rawCall(t *testing.T, method, url, body string, header http.Header) (int, string) {
	t.Helper()
	response, data := rawResponse(t, method, url, body, header)
	return response.StatusCode, data
}

// rawResponse is rawCall with the whole response (its body already read and closed).
func rawResponse(t *testing.T, method, url, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range header {
		request.Header[name] = values
	}
	response, data := send(t, request)
	return response, string(data)
}

var (
	restJSON    = http.Header{"Content-Type": {"application/json"}}
	connectJSON = http.Header{"Content-Type": {"application/json"}, "Connect-Protocol-Version": {"1"}}
)

// Malformed requests are INVALID_ARGUMENT / INVALID_REQUEST (HTTP 400) with the ErrorInfo, the
// server's answer to a request that does not parse, and end at once. Before, the transcoder's
// refusals were UNKNOWN (HTTP 500) without details, and the response never ended: the backend
// waited for a request message that never came. A query parameter also overrode the path:
// GET /v1/tables/x?name=tables/y read table y.
func TestLiveMalformedRequestsAreInvalidRequest(t *testing.T) {
	base := gatewayURL(t)
	for _, c := range []struct {
		method, path, body string
		header             http.Header
	}{
		{http.MethodGet, "/v1/tables?pageSize=abc", "", nil},
		{http.MethodGet, "/v1/tables?bogus=1", "", nil},
		{http.MethodGet, "/v1/tables?pageSize=1&pageSize=2", "", nil},
		{http.MethodGet, "/v1/tables?hasFreeSeat=maybe", "", nil},
		{http.MethodGet, "/v1/tables?pageToken=%FF", "", nil},
		{http.MethodGet, "/v1/tables", "{}", restJSON},
		{http.MethodGet, "/v1/tables/x?name=tables/y", "", nil},
		{http.MethodGet, "/v1/tables/x:watch?name=tables/y", "", nil},
		{http.MethodDelete, "/v1/tables/x?name=tables/y", "", nil},
		{http.MethodPost, "/v1/tables/x:join?playerDisplayName=Q", `{"playerDisplayName": "P"}`, restJSON},
		{http.MethodPost, "/v1/tables?table.displayName=Q", `{"displayName": "P"}`, restJSON},
		{http.MethodPost, "/v1/tables/x:join", "not json", restJSON},
		{http.MethodPost, "/v1/tables", `{"seats": "none"}`, restJSON},
		// An enum name its enum lacks: protojson's DiscardUnknown would take it as 0 (an empty
		// seat instead of a bot, the default moon scoring, "not a card" with a misleading rank).
		{http.MethodPost, "/v1/tables", `{"seats": [{"seat": 1, "occupant": "SEAT_OCCUPANT_BOTT"}]}`, restJSON},
		{http.MethodPost, "/v1/tables", `{"rules": {"moonScoring": "MOON_SCORING_SUBTRACT_FROM_SHOOTR"}}`, restJSON},
		{http.MethodPost, "/v1/tables/x:playCard", `{"card": {"suit": "SUIT_CLUBS", "rank": "RANK_ONE"}}`, restJSON},
		// CreateTable's body is its table: none at all is a request without one ({} is a table
		// of defaults), as over gRPC.
		{http.MethodPost, "/v1/tables", "", restJSON},
		// ... and not the whole request: a table wrapped in it, or the request id in the body,
		// would have been dropped as unknown fields (a table of defaults, a retry's second table).
		{http.MethodPost, "/v1/tables", `{"table": {"displayName": "P"}}`, restJSON},
		{http.MethodPost, "/v1/tables", `{"displayName": "P", "requestId": "r-1"}`, restJSON},
		{http.MethodPost, "/v1/tables", `{"displayName": "P", "request_id": "r-1"}`, restJSON},
		// A path that is not UTF-8: the table's name is a string field (was UNKNOWN, HTTP 500).
		{http.MethodGet, "/v1/tables/ab%FFcd", "", nil},
		{http.MethodPost, "/v1/tables/ab%FFcd:join", `{"playerDisplayName": "P"}`, restJSON},
	} {
		what := fmt.Sprintf("%s %s %s", c.method, c.path, c.body)
		t.Run(what, func(t *testing.T) {
			code, body := rawCall(t, c.method, base+c.path, c.body, c.header)
			restError(t, what, code, []byte(body), http.StatusBadRequest, "INVALID_REQUEST")
		})
	}
	for _, c := range []struct{ method, body string }{
		{heartsv1.TableService_GetTable_FullMethodName, "not json"},
		{heartsv1.TableService_GetTable_FullMethodName, `{"name": 7}`},
		{heartsv1.TableService_GetTable_FullMethodName, ""},
		{heartsv1.TableService_CreateTable_FullMethodName, `{"table": {"seats": [{"seat": 1, "occupant": "SEAT_OCCUPANT_BOT", "bot_level": "BOT_LEVEL_RANDOMM"}]}}`},
	} {
		code, data := rawCall(t, http.MethodPost, base+c.method, c.body, connectJSON)
		if got, reason := connectError(t, data); code != http.StatusBadRequest || got != "invalid_argument" || reason != "INVALID_REQUEST" {
			t.Errorf("Connect JSON %s %q: HTTP %d, %s / %s: %s", c.method, c.body, code, got, reason, data)
		}
	}
}

// What the transcoder would answer in plain text comes as a google.rpc.Status in JSON, as every
// other REST error: a path that names no call (404), or names one with another method (405,
// with Allow), a body not sent as JSON (415: curl -d sends a form's Content-Type), and a
// streaming call, which has no REST form (415).
func TestLiveRESTRefusalsAreStatusJSON(t *testing.T) {
	base := gatewayURL(t)
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for _, c := range []struct {
		method, path, body string
		header             http.Header
		wantHTTP           int
		wantReason, allow  string
	}{
		{http.MethodGet, "/v1/tables/a/b", "", nil, http.StatusNotFound, "NO_SUCH_CALL", ""},
		{http.MethodPost, "/v1/nothing", "{}", restJSON, http.StatusNotFound, "NO_SUCH_CALL", ""},
		{http.MethodPut, "/v1/tables", "{}", restJSON, http.StatusMethodNotAllowed, "NO_SUCH_CALL", "GET, POST"},
		{http.MethodGet, "/v1/tables/x:join", "", nil, http.StatusMethodNotAllowed, "NO_SUCH_CALL", "POST"},
		{http.MethodPost, "/v1/tables", "{}", form, http.StatusUnsupportedMediaType, "INVALID_REQUEST", ""},
		{http.MethodPost, "/v1/tables/x:join", `{"playerDisplayName": "P"}`, http.Header{"Content-Type": {"text/plain"}}, http.StatusUnsupportedMediaType, "INVALID_REQUEST", ""},
		{http.MethodPost, "/v1/tables", "{}", http.Header{"Content-Type": {"application/json; charset=latin1"}}, http.StatusUnsupportedMediaType, "INVALID_REQUEST", ""},
		{http.MethodGet, "/v1/tables/x:watch", "", nil, http.StatusUnsupportedMediaType, "INVALID_REQUEST", ""},
	} {
		what := fmt.Sprintf("%s %s (%v)", c.method, c.path, c.header)
		t.Run(what, func(t *testing.T) {
			response, data := rawResponse(t, c.method, base+c.path, c.body, c.header)
			if got := response.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q: %s", got, data)
			}
			if got := response.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
			restError(t, what, response.StatusCode, []byte(data), c.wantHTTP, c.wantReason)
		})
	}
	// JSON in UTF-8 however it is spelled, and a body without a Content-Type (which vanguard
	// takes for JSON), reach the server: vanguard itself takes only two exact spellings.
	for _, contentType := range []string{
		"application/json; charset=utf-8", "application/json;charset=utf-8", "Application/JSON",
		"application/json; charset=UTF-8", "",
	} {
		header := http.Header{"Content-Type": {contentType}}
		if contentType == "" {
			header = nil
		}
		code, data := rawCall(t, http.MethodPost, base+"/v1/tables", "{}", header)
		if code != http.StatusOK {
			t.Errorf("Content-Type %q: HTTP %d: %s", contentType, code, data)
		}
	}
	// CreateTable's body is its table: an empty chunked body is none, as an empty plain one.
	code, data := chunkedPost(t, base+"/v1/tables", "")
	restError(t, "an empty chunked body", code, []byte(data), http.StatusBadRequest, "INVALID_REQUEST")
	// A chunked table is read whole.
	code, data = chunkedPost(t, base+"/v1/tables", `{"displayName": "chunked"}`)
	if code != http.StatusOK || !strings.Contains(data, `"displayName":"chunked"`) {
		t.Errorf("a chunked table: HTTP %d: %s", code, data)
	}
}

// chunkedPost sends body as JSON with chunked transfer encoding (no Content-Length), and
// returns the status and body of the answer.
func chunkedPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	request, err := http.NewRequest(http.MethodPost, url, io.NopCloser(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	request.ContentLength = -1 // sent chunked
	request.Header.Set("Content-Type", "application/json")
	response, data := send(t, request)
	return response.StatusCode, string(data)
}

// The enum check walks what the request's descriptor knows and nothing else: unknown fields
// (and any enum name inside them) are ignored, numbers are left to the server, names are checked
// in lists, maps and nested messages, and the well-known types are protojson's to check.
func TestCheckEnumNames(t *testing.T) {
	create := (&heartsv1.CreateTableRequest{}).ProtoReflect().Descriptor()
	for _, c := range []struct {
		json string
		want string // "" when the request passes; else a part of the error
	}{
		{`{"table": {"seats": [{"seat": 1, "occupant": "SEAT_OCCUPANT_BOT", "botLevel": "BOT_LEVEL_RANDOM"}]}}`, ""},
		{`{"table": {"seats": [{"seat": 1, "occupant": 2, "botLevel": 99}]}}`, ""},
		{`{"table": {"future": {"occupant": "NO_SUCH_NAME"}, "rules": {"moon_scoring": "MOON_SCORING_ADD_TO_OTHERS"}}}`, ""},
		{`{"table": {"turnTimeout": "30s", "seats": null}}`, ""},
		{`{"table": {"seats": [{"seat": 0}, {"seat": 1, "occupant": "SEAT_OCCUPANT_BOTT"}]}}`, `table.seats[1].occupant: hearts.v1.SeatOccupant has no value named "SEAT_OCCUPANT_BOTT"`},
		{`{"table": {"rules": {"moon_scoring": "ADD_TO_OTHERS"}}}`, `table.rules.moon_scoring: hearts.v1.MoonScoring has no value named "ADD_TO_OTHERS"`},
	} {
		err := checkEnumNames([]byte(c.json), func(value any) error { return checkMessageEnums(value, create, "") })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.json, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.json, err, c.want)
		}
	}
}

// connectError is the code of a Connect error body, and the reason of its hearts.v1 ErrorInfo.
func connectError(t *testing.T, body string) (code, reason string) {
	t.Helper()
	var e struct {
		Code    string `json:"code"`
		Details []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not a Connect error: %v: %s", err, body)
	}
	for _, detail := range e.Details {
		data, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(detail.Value, "="))
		info := &errdetails.ErrorInfo{}
		if err == nil && detail.Type == "google.rpc.ErrorInfo" && proto.Unmarshal(data, info) == nil && info.GetDomain() == "hearts.v1" {
			reason = info.GetReason()
		}
	}
	return e.Code, reason
}

// The REST routes the gateway checks queries against are those vanguard serves.
func TestRESTRoutesMatchAsTheTranscoderRoutes(t *testing.T) {
	routes, err := restRoutes(tableServiceDescriptor())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, request string }{
		{http.MethodGet, "/v1/tables/abc", "GetTableRequest"},
		{http.MethodGet, "/v1/tables", "ListTablesRequest"},
		{http.MethodPost, "/v1/tables", "CreateTableRequest"},
		{http.MethodDelete, "/v1/tables/abc", "DeleteTableRequest"},
		{http.MethodPost, "/v1/tables/abc:join", "JoinTableRequest"},
		{http.MethodPost, "/v1/tables/abc:leave", "LeaveTableRequest"},
		{http.MethodPost, "/v1/tables/abc:passCards", "PassCardsRequest"},
		{http.MethodPost, "/v1/tables/abc:playCard", "PlayCardRequest"},
		{http.MethodPost, "/v1/tables/abc:rematch", "RematchTableRequest"},
		{http.MethodGet, "/v1/tables/abc:suggestMove", "SuggestMoveRequest"},
		{http.MethodPost, "/v1/tables/abc:sendReaction", "SendReactionRequest"},
		{http.MethodGet, "/v1/tables/abc:watch", "WatchTableRequest"},
		{http.MethodPost, "/v1/tables:quickJoin", "QuickJoinRequest"},
		{http.MethodGet, "/v1/tables:quickJoin", ""},
		{http.MethodPost, "/v1/tables:listPlayerTables", "ListPlayerTablesRequest"},
		{http.MethodGet, "/v1/tables:listPlayerTables", ""},
		{http.MethodGet, "/v1/tables/abc/more", ""},
		{http.MethodPost, "/v1/tables/abc", ""},
		{http.MethodGet, "/v1/tables/abc:unknown", ""},
		{http.MethodPost, heartsv1.TableService_GetTable_FullMethodName, ""},
	} {
		var matched []string
		for _, route := range routes {
			if route.matches(c.method, c.path) {
				matched = append(matched, string(route.request.Name()))
			}
		}
		if want := []string{c.request}; (c.request == "" && len(matched) != 0) || (c.request != "" && !slices.Equal(matched, want)) {
			t.Errorf("%s %s: routes of %q, want %q", c.method, c.path, matched, c.request)
		}
	}
	// The path binds name; CreateTable's body is its table.
	for _, route := range routes {
		if route.request.Name() == "GetTableRequest" && (len(route.bound) != 1 || fieldPathName(route.bound[0]) != "name" || route.body != "") {
			t.Errorf("GetTable: bound %v, body %q", route.bound, route.body)
		}
		if route.request.Name() == "CreateTableRequest" && (len(route.bound) != 0 || route.body != "table") {
			t.Errorf("CreateTable: bound %v, body %q", route.bound, route.body)
		}
	}
}

// Compressed requests work in every protocol, and the message limit applies to a request once
// it is decompressed.
func TestLiveGzipRequests(t *testing.T) {
	base := gatewayURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	huge := &heartsv1.GetTableRequest{Name: "tables/" + strings.Repeat("x", maxMessageBytes)}
	for _, protocol := range []struct {
		name    string
		client  *http.Client
		options []connect.ClientOption
	}{
		{"Connect", http.DefaultClient, nil},
		{"Connect JSON", http.DefaultClient, []connect.ClientOption{connect.WithProtoJSON()}},
		{"gRPC-Web", http.DefaultClient, []connect.ClientOption{connect.WithGRPCWeb()}},
		{"gRPC-Web JSON", http.DefaultClient, []connect.ClientOption{connect.WithGRPCWeb(), connect.WithProtoJSON()}},
		{"gRPC", h2cClient(), []connect.ClientOption{connect.WithGRPC()}},
	} {
		options := append([]connect.ClientOption{connect.WithSendGzip()}, protocol.options...)
		list := connect.NewClient[heartsv1.ListTablesRequest, heartsv1.ListTablesResponse](
			protocol.client, base+heartsv1.TableService_ListTables_FullMethodName, options...)
		if _, err := list.CallUnary(ctx, connect.NewRequest(&heartsv1.ListTablesRequest{PageSize: 1})); err != nil {
			t.Errorf("%s, gzip: ListTables: %v", protocol.name, err)
		}
		get := connect.NewClient[heartsv1.GetTableRequest, heartsv1.GetTableResponse](
			protocol.client, base+heartsv1.TableService_GetTable_FullMethodName, options...)
		// Refused as it is decompressed, not after: gzip inflates up to about a thousandfold, so
		// a request within the limit as it arrives could otherwise take gigabytes of memory. The
		// gateway's gRPC server decompresses binary messages, with that limit; the transcoder
		// decompresses JSON ones to translate them, with boundedGzipDecompressor.
		want := "grpc: received message after decompression larger than max"
		if strings.HasSuffix(protocol.name, "JSON") {
			want = "once decompressed"
		}
		_, err := get.CallUnary(ctx, connect.NewRequest(huge))
		if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), want) {
			t.Errorf("%s, gzip: a request of %d bytes once decompressed: %v, want RESOURCE_EXHAUSTED: %s", protocol.name, maxMessageBytes, err, want)
		}
	}
}

// The decompressor stops at the limit, having read no more than a buffer past it.
func TestBoundedGzipDecompressorStopsAtTheLimit(t *testing.T) {
	var compressed bytes.Buffer
	writer := gzip.NewWriter(&compressed)
	if _, err := writer.Write(make([]byte, 64*maxMessageBytes)); err != nil {
		t.Fatal(err)
	}
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	decompressor := newBoundedGzipDecompressor()
	if err := decompressor.Reset(&compressed); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, decompressor)
	if connect.CodeOf(err) != connect.CodeResourceExhausted || n > maxMessageBytes+64<<10 {
		t.Errorf("%d bytes of 64 x %d read: %v", n, maxMessageBytes, err)
	}
}

// A header gRPC cannot carry (bytes past ASCII) no longer fails the call as INTERNAL (HTTP 500):
// such an authorization header is a malformed token, and any other such header is left out.
func TestLiveHeadersGRPCCannotCarry(t *testing.T) {
	base := gatewayURL(t)
	code, data := call(t, http.MethodPost, base+"/v1/tables", "", &heartsv1.Table{DisplayName: "odd headers"})
	created := &heartsv1.CreateTableResponse{}
	decode(t, "POST /v1/tables", code, data, created)
	name := created.GetView().GetTable().GetName()
	badToken := http.Header{"Authorization": {"Bearer v1.abc.\xc3\xa9"}}

	code, body := rawCall(t, http.MethodGet, base+"/v1/"+name, "", badToken)
	restError(t, "REST GetTable, token not ASCII", code, []byte(body), http.StatusUnauthorized, "TOKEN_INVALID")

	header := http.Header{"Authorization": badToken["Authorization"]}
	for name, values := range connectJSON {
		header[name] = values
	}
	code, body = rawCall(t, http.MethodPost, base+heartsv1.TableService_GetTable_FullMethodName,
		fmt.Sprintf(`{"name": %q}`, name), header)
	if got, reason := connectError(t, body); code != http.StatusUnauthorized || got != "unauthenticated" || reason != "TOKEN_INVALID" {
		t.Errorf("Connect GetTable, token not ASCII: HTTP %d, %s / %s: %s", code, got, reason, body)
	}

	code, body = rawCall(t, http.MethodGet, base+"/v1/"+name, "", http.Header{"X-Note": {"caf\xc3\xa9"}})
	got := &heartsv1.GetTableResponse{}
	decode(t, "REST GetTable with X-Note: café", code, []byte(body), got)
	if got.GetView().GetTable().GetName() != name {
		t.Errorf("GetTable answered %s", body)
	}
}

// A body that is CreateTable's table may hold unknown fields (ignored), but not the request's
// own fields: the table wrapped in a request, or its request id.
func TestCheckRequestFieldsInBody(t *testing.T) {
	body := restBodyFields()["hearts.v1.Table"]
	if body == nil || body.ContainingMessage().FullName() != "hearts.v1.CreateTableRequest" {
		t.Fatalf("CreateTable's body field: %v", body)
	}
	for _, c := range []struct{ json, want string }{
		{`{"displayName": "P", "seats": [], "future": 1}`, ""},
		{`{"display_name": "P"}`, ""},
		{`{"table": {}}`, "the body is the table itself"},
		{`{"requestId": "r"}`, `"requestId" is a field of the request: send it in the query string (?requestId=...)`},
		{`{"request_id": "r"}`, `"request_id" is a field of the request`},
		{`{"identityToken": "jwt"}`, `call this over Connect or gRPC-Web to keep it out of URLs`},
	} {
		err := checkEnumNames([]byte(c.json), func(value any) error {
			return checkRequestFieldsInBody(value, body.ContainingMessage(), body)
		})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.json, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.json, err, c.want)
		}
	}
}
