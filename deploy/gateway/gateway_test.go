package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

func TestConfigDefaultsEnvironmentAndFlags(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.listen != "127.0.0.1:8080" || cfg.backend != "127.0.0.1:50051" || cfg.connections != 10 ||
		cfg.corsOrigins != nil || cfg.delay != 0 || cfg.grace != 10*time.Second || cfg.logFormat != "text" {
		t.Errorf("defaults: %+v", cfg)
	}

	env := map[string]string{
		"HEARTS_GATEWAY_BACKEND":             "dns:///hearts-server-pods:50051",
		"HEARTS_GATEWAY_BACKEND_CONNECTIONS": "3",
		"HEARTS_GATEWAY_CORS_ORIGINS":        " https://a.test, https://b.test/ ,",
		"HEARTS_GATEWAY_GRACE_SECONDS":       "2.5",
		"HEARTS_GATEWAY_LISTEN":              "0.0.0.0:8080",
	}
	cfg, err = parseConfig([]string{"--listen", "127.0.0.1:0"}, func(name string) string { return env[name] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.listen != "127.0.0.1:0" {
		t.Errorf("a flag wins over its variable: listen %q", cfg.listen)
	}
	if cfg.backend != "dns:///hearts-server-pods:50051" || cfg.connections != 3 || cfg.grace != 2500*time.Millisecond {
		t.Errorf("from the environment: %+v", cfg)
	}
	if !slices.Equal(cfg.corsOrigins, []string{"https://a.test", "https://b.test"}) {
		t.Errorf("origins %q", cfg.corsOrigins)
	}

	for _, args := range [][]string{
		{"--grace-seconds", "-1"}, {"--grace-seconds", "soon"}, {"--shutdown-delay-seconds", "1e9"},
		{"--grace-seconds", "NaN"}, {"--shutdown-delay-seconds", "nan"}, {"--grace-seconds", "Inf"},
		{"--log-format", "xml"}, {"--backend-connections", "0"},
		{"--backend", ""}, {"stray"},
		{"--cors-origins", "localhost:5173"}, {"--cors-origins", "https://a.test,a.test"},
		{"--cors-origins", "https://a.test/app"}, {"--cors-origins", "://a.test"},
	} {
		if _, err := parseConfig(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestTheListeningLineIsAJSONLineWhenTheLogsAre(t *testing.T) {
	address := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	var text bytes.Buffer
	announce(&text, "text", address)
	if got := text.String(); got != "hearts-gateway listening on 127.0.0.1:8080\n" {
		t.Errorf("text: %q", got)
	}
	var line bytes.Buffer
	announce(&line, "json", address)
	var record map[string]any
	if err := json.Unmarshal(line.Bytes(), &record); err != nil {
		t.Fatalf("json: %q is not a JSON line: %v", line.String(), err)
	}
	if record["address"] != "127.0.0.1:8080" || record["msg"] != "hearts-gateway listening on 127.0.0.1:8080" {
		t.Errorf("json: %v", record)
	}
}

func TestEveryFlagHasItsVariable(t *testing.T) {
	for _, s := range settings {
		want := "HEARTS_GATEWAY_" + strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_"))
		if s.env != want {
			t.Errorf("--%s: variable %s, want %s", s.flag, s.env, want)
		}
	}
}

func TestRequestMetadataKeepsTheCallsAndDropsTheBrowsersHeaders(t *testing.T) {
	in := metadata.MD{
		"authorization":            {"Bearer seat-token"},
		"x-request-tag":            {"kept"},
		"user-agent":               {"test"},
		"x-forwarded-for":          {"203.0.113.7"},
		":authority":               {"gateway.test"},
		"content-type":             {"application/grpc+proto"},
		"cookie":                   {"session=secret"},
		"origin":                   {"https://app.test"},
		"referer":                  {"https://app.test/table"},
		"x-grpc-web":               {"1"},
		"x-user-agent":             {"connect-es/2.1.2"},
		"connect-protocol-version": {"1"},
		"grpc-accept-encoding":     {"gzip"},
		"sec-fetch-mode":           {"cors"},
	}
	ctx := metadata.NewIncomingContext(context.Background(), in)
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv6loopback, Port: 4242}})
	out := forwardedRequestMetadata(ctx)
	// Not user-agent: the backend would see gRPC-Go's in its place anyway (a live test checks).
	want := metadata.MD{
		"authorization":   {"Bearer seat-token"},
		"x-request-tag":   {"kept"},
		"x-forwarded-for": {"203.0.113.7, ::1"},
	}
	if len(out) != len(want) {
		t.Errorf("forwarded %v, want %v", keys(out), keys(want))
	}
	for key, values := range want {
		if !slices.Equal(out[key], values) {
			t.Errorf("%s: %q, want %q", key, out[key], values)
		}
	}
}

// HTTP lets headers carry what gRPC's metadata cannot: gRPC-Go would refuse the whole backend
// call (INTERNAL), so such a header is left out, and the call goes on.
func TestRequestMetadataLeavesOutWhatGRPCCannotCarry(t *testing.T) {
	in := metadata.MD{
		"x-note":      {"café"},
		"x-tab":       {"a\tb"},
		"x!tag":       {"kept by HTTP, not by gRPC"},
		"x-blob-bin":  {"\xff\x00binary"},
		"x-plain":     {"plain ASCII ~"},
		"x-two-notes": {"ok", "not ok: é"},
	}
	out := forwardedRequestMetadata(metadata.NewIncomingContext(context.Background(), in))
	if want := []string{"x-blob-bin", "x-plain"}; !slices.Equal(keys(out), want) {
		t.Errorf("forwarded %v, want %v", keys(out), want)
	}
}

func TestResponseMetadataDropsWhatTheGatewayWritesItself(t *testing.T) {
	out := forwardedResponseMetadata(metadata.MD{
		"content-type": {"application/grpc"}, "grpc-status": {"0"}, "x-served-by": {"replica-1"},
	})
	if !slices.Equal(keys(out), []string{"x-served-by"}) {
		t.Errorf("forwarded %v", keys(out))
	}
}

func TestCORSIsOffUnlessOriginsAreGiven(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	handler := newHandler(api, &health{}, nil)
	preflight := httptest.NewRequest(http.MethodOptions, "/hearts.v1.TableService/GetTable", nil)
	preflight.Header.Set("Origin", "https://elsewhere.test")
	preflight.Header.Set("Access-Control-Request-Method", "POST")
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, preflight)
	if got := recorder.Header().Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("no origins configured, yet Access-Control-Allow-Origin: %q", got)
	}

	handler = newHandler(api, &health{}, []string{"*"})
	recorder = httptest.NewRecorder()
	handler.ServeHTTP(recorder, preflight)
	if got := recorder.Header().Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("with *: Access-Control-Allow-Origin %q", got)
	}
	if got := recorder.Header().Get("Access-Control-Allow-Credentials"); got != "" {
		t.Errorf("credentials must never be allowed: %q", got)
	}
}

func TestHealthzFailsWhileDraining(t *testing.T) {
	h := &health{}
	h.draining.Store(true)
	recorder := httptest.NewRecorder()
	h.healthz(recorder, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if recorder.Code != http.StatusServiceUnavailable {
		t.Errorf("draining: %d %s", recorder.Code, recorder.Body)
	}
}

// A gateway whose backend is not there: it starts (the connection is lazy), /livez answers,
// /healthz fails, an API call fails with UNAVAILABLE / BACKEND_UNAVAILABLE, and it stops on
// cancel. What the backend's connection failed with (its address among it) goes to the log
// only, not to anonymous clients.
func TestWithoutABackendOnlyHealthzFails(t *testing.T) {
	backend := unreachableAddress(t)
	var log syncBuffer
	base, stop := startGatewayLogging(t, testConfig(backend), &log)

	if code, body := get(t, base+"/livez"); code != http.StatusOK {
		t.Errorf("/livez: %d %s", code, body)
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusServiceUnavailable || body != "backend: Unavailable\n" {
		t.Errorf("/healthz without a backend: %d %q, want 503 %q", code, body, "backend: Unavailable\n")
	}
	status, body := rawCall(t, http.MethodPost, base+"/hearts.v1.TableService/ListTables", "{}", connectJSON)
	if code, reason := connectError(t, body); status != http.StatusServiceUnavailable ||
		code != "unavailable" || reason != "BACKEND_UNAVAILABLE" {
		t.Errorf("Connect call without a backend: %d %s", status, body)
	}
	code, data := call(t, http.MethodGet, base+"/v1/tables", "", nil)
	restError(t, "REST call without a backend", code, data, http.StatusServiceUnavailable, "BACKEND_UNAVAILABLE")
	stop()
	for _, answer := range []string{string(body), string(data)} {
		if strings.Contains(answer, backend) || strings.Contains(answer, "dial") {
			t.Errorf("the backend's address or the dial error reached the client: %s", answer)
		}
	}
	if got := log.String(); !strings.Contains(got, backend) || !strings.Contains(got, "backend unavailable") ||
		!strings.Contains(got, "health check of the backend failed") {
		t.Errorf("the log does not say what failed: %s", got)
	}
}

// With the backend down every request fails, and the log says so once per few seconds, not
// once per request (300 requests wrote 300 lines before).
func TestABackendOutOfReachIsLoggedOncePerInterval(t *testing.T) {
	backend := unreachableAddress(t)
	var log syncBuffer
	base, stop := startGatewayLogging(t, testConfig(backend), &log)
	for range 30 {
		code, data := call(t, http.MethodGet, base+"/v1/tables", "", nil)
		restError(t, "REST call without a backend", code, data, http.StatusServiceUnavailable, "BACKEND_UNAVAILABLE")
	}
	stop()
	if lines := strings.Count(log.String(), "backend unavailable"); lines != 1 {
		t.Errorf("30 failed calls within a second logged %d lines, want 1:\n%s", lines, log.String())
	}
}

func TestThrottledLogCountsWhatItHeldBack(t *testing.T) {
	var throttle throttledLog
	start := time.Unix(1_800_000_000, 0)
	steps := []struct {
		after   time.Duration
		ok      bool
		skipped int
	}{
		{0, true, 0},
		{time.Second, false, 0},
		{4 * time.Second, false, 0},
		{5 * time.Second, true, 2},
		{5*time.Second + time.Millisecond, false, 0},
		{20 * time.Second, true, 1},
	}
	for _, step := range steps {
		ok, skipped := throttle.allow(start.Add(step.after), 5*time.Second)
		if ok != step.ok || skipped != step.skipped {
			t.Errorf("at %s: allow gave (%v, %d), want (%v, %d)", step.after, ok, skipped, step.ok, step.skipped)
		}
	}
}

// unreachableAddress is a loopback address where nothing listens: a backend that is down.
func unreachableAddress(t *testing.T) string {
	t.Helper()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	return closed.Addr().String()
}

// syncBuffer is a log destination that tests read while the gateway may write to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// During the shutdown delay the gateway goes on serving, and only /healthz fails, so that the
// load balancer takes it out before it stops listening.
func TestDuringTheShutdownDelayOnlyHealthzFails(t *testing.T) {
	cfg := testConfig("127.0.0.1:1")
	cfg.delay = time.Second
	base, stop := startGateway(t, cfg)
	stopping := make(chan struct{})
	go func() { stop(); close(stopping) }()
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		code, body := get(t, base+"/healthz")
		if code == http.StatusServiceUnavailable && strings.Contains(body, "draining") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz still %d %s after the shutdown began", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := get(t, base+"/livez"); code != http.StatusOK {
		t.Errorf("/livez during the delay: %d %s", code, body)
	}
	select {
	case <-stopping:
	case <-time.After(5 * time.Second):
		t.Fatal("the gateway did not stop after its delay")
	}
	if _, err := http.Get(base + "/livez"); err == nil {
		t.Error("still listening after the shutdown")
	}
}

// testConfig is the defaults, with backend.
func testConfig(backend string) config {
	cfg, err := parseConfig([]string{"--backend", backend}, func(string) string { return "" }, io.Discard)
	if err != nil {
		panic(err)
	}
	return cfg
}

// startGateway runs the gateway in-process on a free loopback port; stop shuts it down as
// SIGTERM would and fails the test unless it returns cleanly within 10 s (plus the delay).
func startGateway(t *testing.T, cfg config) (base string, stop func()) {
	t.Helper()
	return startGatewayLogging(t, cfg, io.Discard)
}

// startGatewayLogging is startGateway, with the gateway's log written to log.
func startGatewayLogging(t *testing.T, cfg config, log io.Writer) (base string, stop func()) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg.listen = listener.Addr().String()
	delay := cfg.delay
	go func() { done <- run(ctx, cfg, listener, slog.New(slog.NewTextHandler(log, nil))) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(delay + 10*time.Second):
			t.Errorf("the gateway did not stop within 10 s of its shutdown")
		}
	}
	t.Cleanup(stop)
	return "http://" + listener.Addr().String(), stop
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	request, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	response, body := send(t, request)
	return response.StatusCode, string(body)
}

func keys(md metadata.MD) []string {
	names := make([]string, 0, len(md))
	for key := range md {
		names = append(names, key)
	}
	slices.Sort(names)
	return names
}

// The server's own UNAVAILABLE (with its ErrorInfo) reaches the client as it is; only the bare
// one gRPC-Go writes when it cannot reach the backend is replaced.
func TestBackendErrorKeepsTheServersOwn(t *testing.T) {
	p := &proxy{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	own := withErrorInfo(codes.Unavailable, "STORE_UNAVAILABLE", "the table store cannot be reached")
	if got := p.backendError(ctx, "/m", own); got != own {
		t.Errorf("the server's STORE_UNAVAILABLE became %v", got)
	}
	bare := status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 10.1.2.3:50051: connect: connection refused"`)
	got := status.Convert(p.backendError(ctx, "/m", bare))
	info, ok := got.Details()[0].(*errdetails.ErrorInfo)
	if got.Code() != codes.Unavailable || strings.Contains(got.Message(), "10.1.2.3") || !ok || info.GetReason() != "BACKEND_UNAVAILABLE" {
		t.Errorf("a transport error became %v %v", got.Code(), got.Details())
	}
	notFound := withErrorInfo(codes.NotFound, "TABLE_NOT_FOUND", "no table")
	if got := p.backendError(ctx, "/m", notFound); got != notFound {
		t.Errorf("NOT_FOUND became %v", got)
	}
}

func TestOriginsAreSchemeHostAndPortOrAny(t *testing.T) {
	origins, err := parseOrigins(" https://a.test/ ,, http://localhost:5173,capacitor://localhost,*")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://a.test", "http://localhost:5173", "capacitor://localhost", "*"}
	if !slices.Equal(origins, want) {
		t.Errorf("origins %q, want %q", origins, want)
	}
}
