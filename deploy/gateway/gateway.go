package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"github.com/rs/cors"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	// Requests compressed with gzip (Connect's Content-Encoding, gRPC's and gRPC-Web's
	// grpc-encoding) reach the gateway's gRPC server compressed; it decompresses them, to the
	// same 4 MiB limit as any message.
	_ "google.golang.org/grpc/encoding/gzip"

	// The ErrorInfo of every error's details must be known by name to write REST and Connect
	// errors as JSON; the hearts.v1 messages (MoveRejection among them) come with the service.
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// serviceName is the service the gateway serves, and the one whose health it reports.
const serviceName = "hearts.v1.TableService"

// maxMessageBytes is the largest message the gateway translates, either way.
const maxMessageBytes = 4 << 20

// healthTimeout bounds one health check of the backend (a probe's own timeout is longer).
const healthTimeout = 2 * time.Second

// Headers a browser may send cross-origin: the seat token, and what the Connect, gRPC-Web and
// REST protocols use (https://connectrpc.com/docs/cors).
var corsAllowedHeaders = []string{
	"Authorization", "Content-Type", "Accept",
	"Connect-Protocol-Version", "Connect-Timeout-Ms", "Connect-Accept-Encoding", "Connect-Content-Encoding",
	"Grpc-Timeout", "Grpc-Accept-Encoding", "X-Grpc-Web", "X-User-Agent",
}

// Response headers a cross-origin script may read: a call that fails at once answers gRPC-Web
// with its status in the headers (trailers-only), details included.
var corsExposedHeaders = []string{
	"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin",
	"Grpc-Encoding", "Grpc-Accept-Encoding", "Connect-Content-Encoding", "Connect-Accept-Encoding",
}

// corsHandler allows the listed origins ("*": any) to call the API from a browser; with none
// listed it adds no CORS headers at all, so only pages of the gateway's own origin (and
// programs, which CORS does not concern) can call it. Tokens travel in the Authorization header,
// never in cookies, so credentials (cookies) are never allowed.
func corsHandler(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		// POST: Connect, gRPC-Web and REST; GET: REST reads; DELETE: REST. (Connect's GET
		// requests need methods marked idempotency_level = NO_SIDE_EFFECTS, and none is.)
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodDelete},
		AllowedHeaders: corsAllowedHeaders,
		ExposedHeaders: corsExposedHeaders,
		// Browsers cache a preflight at most this long (Chromium: 2 h).
		MaxAge: 7200,
	}).Handler(next)
}

// tableServiceDescriptor is hearts.v1.TableService's descriptor, registered by the generated Go
// code of clients/go, with its google.api.http rules.
func tableServiceDescriptor() protoreflect.ServiceDescriptor {
	return heartsv1.File_hearts_v1_table_service_proto.Services().ByName("TableService")
}

// newTranscoder serves the service in every protocol vanguard knows (gRPC, gRPC-Web, Connect
// with proto or JSON, REST from the google.api.http annotations) and hands each call, as gRPC
// with binary protobuf, to a gRPC server whose one handler forwards it to the backend.
func newTranscoder(p *proxy) (*vanguard.Transcoder, error) {
	forwarder := grpc.NewServer(grpc.UnknownServiceHandler(p.handle), grpc.ForceServerCodecV2(rawCodec{}))
	service := vanguard.NewServiceWithSchema(tableServiceDescriptor(), forwarder,
		vanguard.WithTargetProtocols(vanguard.ProtocolGRPC),
		vanguard.WithTargetCodecs(vanguard.CodecProto),
		// vanguard buffers a message to translate it, by default up to 4 GiB: a limit keeps one
		// request from taking the gateway's memory. Above the server's own limit (1 MiB by
		// default, for requests and responses alike), as is gRPC-Go's default for receiving.
		vanguard.WithMaxMessageBufferBytes(maxMessageBytes),
	)
	return vanguard.NewTranscoder([]*vanguard.Service{service},
		vanguard.WithCodec(newRequestJSONCodec),
		vanguard.WithCompression(compressionGzip, newGzipCompressor, newBoundedGzipDecompressor))
}

const compressionGzip = "gzip"

func newGzipCompressor() connect.Compressor { return gzip.NewWriter(io.Discard) }

// boundedGzipDecompressor is vanguard's gzip decompressor with a limit: vanguard's own limit
// applies to a message as it arrives, compressed, and gzip inflates up to about a thousandfold,
// so a 4 MiB request could take gigabytes of memory once decompressed to be translated (from
// Connect or gRPC-Web JSON, for instance). This one fails past maxMessageBytes.
type boundedGzipDecompressor struct {
	reader gzip.Reader
	read   int64
}

func newBoundedGzipDecompressor() connect.Decompressor { return &boundedGzipDecompressor{} }

func (d *boundedGzipDecompressor) Read(p []byte) (int, error) {
	n, err := d.reader.Read(p)
	d.read += int64(n)
	if d.read > maxMessageBytes {
		return n, connect.NewError(connect.CodeResourceExhausted,
			fmt.Errorf("a message is larger than %d bytes once decompressed", maxMessageBytes))
	}
	return n, err
}

func (d *boundedGzipDecompressor) Reset(r io.Reader) error {
	d.read = 0
	return d.reader.Reset(r)
}

func (d *boundedGzipDecompressor) Close() error { return d.reader.Close() }

// health answers the probes: /livez is the process itself; /healthz is the backend's
// grpc.health.v1 status for the service, and fails from the first moment of a shutdown.
type health struct {
	client   healthpb.HealthClient
	logger   *slog.Logger
	draining atomic.Bool
}

func (h *health) livez(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func (h *health) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if h.draining.Load() {
		http.Error(w, "draining: the gateway is shutting down", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	reply, err := h.client.Check(ctx, &healthpb.HealthCheckRequest{Service: serviceName})
	if err != nil {
		// The detail (the backend's address among it) goes to the log, not to whoever asks.
		h.logger.Warn("health check of the backend failed", "error", err)
		http.Error(w, "backend: "+status.Code(err).String(), http.StatusServiceUnavailable)
		return
	}
	if reply.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		http.Error(w, "backend: "+reply.GetStatus().String(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok: backend SERVING\n"))
}

// newHandler is the gateway's whole HTTP surface: the probes, and everything else to the API.
func newHandler(api http.Handler, h *health, origins []string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", h.livez)
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.Handle("/", corsHandler(origins, api))
	return mux
}

// parseOrigins splits a comma-separated list of origins; empty parts are dropped, and a part
// that is no origin (scheme://host[:port], or *) is an error: a browser's Origin header always
// has the scheme, so "localhost:5173" would never match and every page would be refused.
func parseOrigins(list string) ([]string, error) {
	var origins []string
	for _, origin := range strings.Split(list, ",") {
		if origin = strings.TrimSpace(origin); origin == "" {
			continue
		}
		origin = strings.TrimSuffix(origin, "/")
		if origin != "*" {
			scheme, host, ok := strings.Cut(origin, "://")
			if !ok || scheme == "" || host == "" || strings.ContainsAny(host, "/?#") {
				return nil, fmt.Errorf("--cors-origins: %q is not an origin: want scheme://host[:port] (such as https://play.example.com), or *", origin)
			}
		}
		origins = append(origins, origin)
	}
	return origins, nil
}
