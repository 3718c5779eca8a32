package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// errDraining cancels the backend side of a stream when the gateway shuts down.
var errDraining = errors.New("the gateway is shutting down")

// frame is one gRPC message, passed through as its encoded bytes: the proxy never decodes what
// the transcoder already checked, and forwards any method of the service unchanged.
type frame struct{ payload []byte }

// rawCodec moves frames in and out of gRPC as they are. It is named "proto" so that the
// backend sees the ordinary content type, application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, status.Errorf(codes.Internal, "gateway: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(f.payload)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return status.Errorf(codes.Internal, "gateway: cannot unmarshal into %T", v)
	}
	f.payload = data.Materialize()
	return nil
}

// Request headers that belong to the hop from the browser (HTTP, CORS, the web protocols), not
// to the call: everything else, the seat token's authorization first, goes to the backend as
// metadata. grpc-timeout arrives as the call's deadline, which the backend call inherits.
// user-agent is not passed on either: gRPC-Go writes its own on the backend call (a reserved
// header), and would drop the caller's.
var hopHeaders = map[string]bool{
	"user-agent": true,
	":authority": true, "host": true, "connection": true, "keep-alive": true,
	"proxy-connection": true, "transfer-encoding": true, "upgrade": true, "te": true,
	"content-type": true, "content-length": true, "accept": true, "accept-encoding": true,
	"accept-language": true, "content-encoding": true, "origin": true, "referer": true,
	"cookie": true, "x-grpc-web": true, "x-user-agent": true, "priority": true,
	"access-control-request-method": true, "access-control-request-headers": true,
}

// forwardedRequestMetadata is what of an incoming call's metadata the backend gets, with the
// caller's address added to x-forwarded-for. A header that gRPC cannot carry is left out (see
// sendable); handle refuses an authorization header of that kind before this is asked.
func forwardedRequestMetadata(ctx context.Context) metadata.MD {
	in, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	for key, values := range in {
		if hopHeaders[key] || strings.HasPrefix(key, "grpc-") || strings.HasPrefix(key, "connect-") ||
			strings.HasPrefix(key, "sec-") || strings.HasPrefix(key, ":") || !sendable(key, values) {
			continue
		}
		out[key] = values
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if host := hostOf(p.Addr.String()); host != "" {
			// One header, the proxies before this one first (RFC 7239's order).
			out.Set("x-forwarded-for", strings.Join(append(out.Get("x-forwarded-for"), host), ", "))
		}
	}
	return out
}

// forwardedResponseMetadata drops from the backend's headers and trailers what the gateway's
// own gRPC layer writes (content type, status); the rest reaches the client.
func forwardedResponseMetadata(md metadata.MD) metadata.MD {
	out := metadata.MD{}
	for key, values := range md {
		if key == "content-type" || strings.HasPrefix(key, "grpc-") || strings.HasPrefix(key, ":") {
			continue
		}
		out[key] = values
	}
	return out
}

// sendable reports whether gRPC can send the header key: values on the backend call. HTTP lets
// a header name hold characters that gRPC's metadata keys may not ([0-9a-z-_.] only), and a
// value hold bytes past ASCII; gRPC-Go refuses such a header when the call starts, which would
// fail the whole call as INTERNAL. Values of a -bin key are binary and always fit.
func sendable(key string, values []string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	if strings.HasSuffix(key, "-bin") {
		return true
	}
	for _, value := range values {
		if !printableASCII(value) {
			return false
		}
	}
	return true
}

// printableASCII reports whether value is printable ASCII (0x20 to 0x7E), what gRPC's metadata
// values may hold.
func printableASCII(value string) bool {
	for i := 0; i < len(value); i++ {
		if value[i] < 0x20 || value[i] > 0x7E {
			return false
		}
	}
	return true
}

// malformedAuthorization refuses a call whose authorization header gRPC cannot carry (bytes
// past ASCII, say): the server's answer to a malformed seat token. Dropping the header instead
// would send the call on without a token, and GetTable would answer with a spectator's view.
func malformedAuthorization(ctx context.Context) error {
	in, _ := metadata.FromIncomingContext(ctx)
	for _, value := range in.Get("authorization") {
		if !printableASCII(value) {
			return withErrorInfo(codes.Unauthenticated, "TOKEN_INVALID", "the token is malformed")
		}
	}
	return nil
}

func hostOf(address string) string {
	if i := strings.LastIndexByte(address, ':'); i > 0 {
		address = address[:i]
	}
	return strings.TrimSuffix(strings.TrimPrefix(address, "["), "]")
}

// backends holds a few connections to the server, each a grpc.ClientConn over every address of
// the target. The server lets one HTTP/2 connection carry at most 1000 calls at once (its
// grpc.max_concurrent_streams), and gRPC-Go holds back a call past that limit until another
// ends: over a single connection, 1000 open WatchTable streams would stall every later call, a
// GetTable too. So each call takes the connection with the fewest calls open.
type backends struct {
	conns  []*grpc.ClientConn
	active []atomic.Int64
}

// dialBackends opens n connections (lazily: they connect on first use). round_robin spreads
// each one's calls over every address the target resolves to (the pods of a headless Service);
// for a single address it is the same as gRPC's default. Keepalive pings only while calls are
// open: the server permits that every 10 s, and refuses pings on an idle connection.
func dialBackends(target string, n int) (*backends, error) {
	b := &backends{active: make([]atomic.Int64, n)}
	for range n {
		conn, err := grpc.NewClient(target,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"round_robin": {}}]}`),
			grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.conns = append(b.conns, conn)
	}
	return b, nil
}

// acquire returns the connection with the fewest calls open, and the function that ends the
// call's claim on it.
func (b *backends) acquire() (*grpc.ClientConn, func()) {
	best := 0
	for i := range b.active {
		if b.active[i].Load() < b.active[best].Load() {
			best = i
		}
	}
	b.active[best].Add(1)
	return b.conns[best], func() { b.active[best].Add(-1) }
}

func (b *backends) Close() {
	for _, conn := range b.conns {
		_ = conn.Close()
	}
}

// proxy forwards every call of the service to the backend: request metadata in, response
// headers and trailers (the status with its details among them) out.
type proxy struct {
	backends *backends
	logger   *slog.Logger
	// serverStreaming names the methods ("/pkg.Service/Method") that stream responses: on
	// shutdown these end at once with UNAVAILABLE, while unary calls may finish.
	serverStreaming map[string]bool
	// clientStreaming names the methods that take more than one request message; hearts.v1 has
	// none, and the proxy forwards none (see handle).
	clientStreaming map[string]bool
	// draining is closed when the gateway starts to shut down.
	draining <-chan struct{}
	// unavailable logs the backend being out of reach at most every unavailableLogEvery.
	unavailable throttledLog
}

// unavailableLogEvery is how often, at most, the gateway logs that the backend cannot be
// reached: with the server down, every request fails so, and one line per request would flood
// the log. The server logs its store failures the same way.
const unavailableLogEvery = 5 * time.Second

// throttledLog lets one line through per interval and counts the ones it held back, which the
// next line reports.
type throttledLog struct {
	mu      sync.Mutex
	last    time.Time
	skipped int
}

// allow reports whether to log now and how many lines were held back since the last one.
func (t *throttledLog) allow(now time.Time, every time.Duration) (bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < every {
		t.skipped++
		return false, 0
	}
	skipped := t.skipped
	t.last, t.skipped = now, 0
	return true, skipped
}

func newProxy(b *backends, service protoreflect.ServiceDescriptor, draining <-chan struct{}, logger *slog.Logger) *proxy {
	p := &proxy{backends: b, logger: logger, serverStreaming: map[string]bool{}, clientStreaming: map[string]bool{}, draining: draining}
	methods := service.Methods()
	for i := range methods.Len() {
		method := methods.Get(i)
		path := "/" + string(service.FullName()) + "/" + string(method.Name())
		p.serverStreaming[path] = method.IsStreamingServer()
		p.clientStreaming[path] = method.IsStreamingClient()
	}
	return p
}

var proxyStreamDesc = &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

// handle is the gateway's gRPC server's only handler (grpc.UnknownServiceHandler).
//
// It reads the call's one request message before it takes a backend connection or opens a
// stream to the backend: a request that never arrives (a body sent slowly, or not at all, until
// withReadDeadline ends it) or that the transcoder refused (malformed JSON: the transcoder has
// answered the client, and the request ends without a message) then holds nothing of the
// backend's, whose server would wait for that message for as long as the call lasted.
func (p *proxy) handle(_ any, in grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(in)
	if !ok {
		return status.Error(codes.Internal, "gateway: no method on the stream")
	}
	if p.clientStreaming[method] {
		return status.Error(codes.Unimplemented, "the gateway forwards no client-streaming methods")
	}
	// The transcoder passes compressed requests on as they are (gzip, decompressed by this gRPC
	// server), and gRPC answers in the request's compression by default: the responses would then
	// be compressed for a hop within the process, and vanguard 0.4 labels a Connect JSON answer
	// to a compressed request gzip without compressing it. The transcoder compresses what the
	// client accepts itself.
	_ = grpc.SetSendCompressor(in.Context(), "identity")
	var request frame
	if err := in.RecvMsg(&request); err != nil {
		if errors.Is(err, io.EOF) {
			// The transcoder has answered the client already if it refused the request; else
			// (an empty Connect JSON body, a gRPC call without a message) this is the answer.
			p.logger.Info("call without a request message", "method", method, "peer", peerOf(in.Context()))
			return invalidRequest("the request has no message")
		}
		p.logger.Info("cannot read the request", "method", method, "peer", peerOf(in.Context()), "error", err)
		return err
	}

	if err := malformedAuthorization(in.Context()); err != nil {
		p.logger.Info("refused a malformed authorization header", "method", method, "peer", peerOf(in.Context()))
		return err
	}
	ctx, cancel := context.WithCancelCause(metadata.NewOutgoingContext(in.Context(), forwardedRequestMetadata(in.Context())))
	defer cancel(nil)
	if p.serverStreaming[method] {
		go func() {
			select {
			case <-p.draining:
				cancel(errDraining)
			case <-ctx.Done():
			}
		}()
	}

	conn, release := p.backends.acquire()
	defer release()
	out, err := conn.NewStream(ctx, proxyStreamDesc, method, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		return p.backendError(ctx, method, err)
	}
	// io.EOF: the backend ended the call already; RecvMsg below returns its status.
	if err := out.SendMsg(&request); err == nil {
		_ = out.CloseSend()
	}

	// Responses, backend to client, then the backend's status and trailers.
	headerSent := false
	for {
		var f frame
		err := out.RecvMsg(&f)
		if err != nil {
			if !headerSent {
				if header, headerErr := out.Header(); headerErr == nil {
					_ = in.SetHeader(forwardedResponseMetadata(header))
				}
			}
			in.SetTrailer(forwardedResponseMetadata(out.Trailer()))
			if errors.Is(err, io.EOF) {
				return nil
			}
			return p.backendError(ctx, method, err)
		}
		if !headerSent {
			header, headerErr := out.Header()
			if headerErr != nil {
				return p.backendError(ctx, method, headerErr)
			}
			if err := in.SendHeader(forwardedResponseMetadata(header)); err != nil {
				return err
			}
			headerSent = true
		}
		if err := in.SendMsg(&f); err != nil {
			return err
		}
	}
}

// errorDomain is the domain of every ErrorInfo of hearts.v1, the gateway's own included.
const errorDomain = "hearts.v1"

// withErrorInfo is a status with a hearts.v1 ErrorInfo of reason as its one detail.
func withErrorInfo(code codes.Code, reason, message string) error {
	st, err := status.New(code, message).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain})
	if err != nil {
		return status.Error(code, message)
	}
	return st.Err()
}

// invalidRequest is INVALID_ARGUMENT with the reason the server gives a request that does not
// parse as its message.
func invalidRequest(message string) error {
	return withErrorInfo(codes.InvalidArgument, "INVALID_REQUEST", message)
}

// backendError is the status the client gets for a failed backend call: the backend's own
// (with its details); when the gateway's shutdown ended a stream, UNAVAILABLE with the same
// reason the server gives when it shuts down, so that clients resume the watch elsewhere; and
// when the backend could not be reached (a bare UNAVAILABLE, which gRPC-Go writes itself, with
// the backend's address in its message), UNAVAILABLE / BACKEND_UNAVAILABLE, the detail going to
// the log only.
func (p *proxy) backendError(ctx context.Context, method string, err error) error {
	if errors.Is(context.Cause(ctx), errDraining) {
		return withErrorInfo(codes.Unavailable, "SHUTTING_DOWN", "the gateway is shutting down; resume the watch from the last sequence")
	}
	st := status.Convert(err)
	if len(st.Proto().GetDetails()) > 0 {
		return err // the server's own error
	}
	switch st.Code() {
	case codes.Unavailable:
		if ok, skipped := p.unavailable.allow(time.Now(), unavailableLogEvery); ok {
			p.logger.Warn("backend unavailable", "method", method, "error", err, "since_last_line", skipped)
		}
		return backendUnavailable()
	case codes.Internal, codes.Unknown:
		p.logger.Warn("backend call failed", "method", method, "error", err)
	}
	return err
}

// backendUnavailable is what clients get when the gateway cannot reach the server: retry.
func backendUnavailable() error {
	return withErrorInfo(codes.Unavailable, "BACKEND_UNAVAILABLE", "the game server cannot be reached; retry")
}

// peerOf is the caller's address, for the log.
func peerOf(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}
