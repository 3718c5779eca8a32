// Command hearts-gateway lets web front ends use the Hearts API: it accepts gRPC-Web, Connect
// (binary or JSON) and REST/JSON (from the google.api.http annotations of hearts.v1), adds CORS
// for browsers, and forwards every call as gRPC to hearts-server, metadata (the seat token's
// authorization) in, headers, trailers and error details out. Server streaming (WatchTable)
// works over gRPC-Web and Connect.
//
// Every flag has an environment variable (HEARTS_GATEWAY_*); a flag wins over its variable.
// See docs/deploy.md and docs/api.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// config is what the flags and HEARTS_GATEWAY_* variables set.
type config struct {
	listen      string
	backend     string
	connections int
	corsOrigins []string
	delay       time.Duration
	grace       time.Duration
	logFormat   string
	// readTimeout bounds the reading of a request's body (requestReadTimeout; tests shorten it).
	readTimeout time.Duration
}

// setting is one flag with its environment variable and default.
type setting struct {
	flag, env, def, usage string
}

var settings = []setting{
	{"listen", "HEARTS_GATEWAY_LISTEN", "127.0.0.1:8080", "host:port to serve HTTP on (port 0 picks a free one; 0.0.0.0:8080 in a container)"},
	{"backend", "HEARTS_GATEWAY_BACKEND", "127.0.0.1:50051", "gRPC target of hearts-server: host:port, or dns:///name:port to spread calls over every address the name has"},
	{"backend-connections", "HEARTS_GATEWAY_BACKEND_CONNECTIONS", "10", "connections to the backend (to each of its addresses); each carries at most 1000 calls at once, WatchTable streams included"},
	{"cors-origins", "HEARTS_GATEWAY_CORS_ORIGINS", "", "comma-separated origins (scheme://host[:port]) whose pages may call the API, or * for any; empty: no CORS, same-origin pages only"},
	{"shutdown-delay-seconds", "HEARTS_GATEWAY_SHUTDOWN_DELAY_SECONDS", "0", "on SIGTERM, how long to go on serving with /healthz failing, while load balancers stop sending new calls (a preStop sleep the image cannot run: it has no shell)"},
	{"grace-seconds", "HEARTS_GATEWAY_GRACE_SECONDS", "10", "after that delay, how long unary calls in flight may finish (streams end at once with UNAVAILABLE)"},
	{"log-format", "HEARTS_GATEWAY_LOG_FORMAT", "text", "text, or json for JSON lines"},
}

func parseConfig(args []string, getenv func(string) string, output io.Writer) (config, error) {
	fs := flag.NewFlagSet("hearts-gateway", flag.ContinueOnError)
	fs.SetOutput(output)
	values := map[string]*string{}
	for _, s := range settings {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		values[s.flag] = fs.String(s.flag, def, fmt.Sprintf("%s (env %s)", s.usage, s.env))
	}
	fs.Usage = func() {
		fmt.Fprintf(output, "Usage: hearts-gateway [flags]\n\nA web gateway (gRPC-Web, Connect, REST/JSON, CORS) in front of hearts-server.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var durations [2]time.Duration
	for i, name := range []string{"shutdown-delay-seconds", "grace-seconds"} {
		seconds, err := strconv.ParseFloat(*values[name], 64)
		// !(0 <= x <= 3600), not x < 0 || x > 3600: NaN passes both of those.
		if err != nil || !(seconds >= 0 && seconds <= 3600) {
			return config{}, fmt.Errorf("--%s: want a number of seconds from 0 to 3600, got %q", name, *values[name])
		}
		durations[i] = time.Duration(seconds * float64(time.Second))
	}
	connections, err := strconv.Atoi(*values["backend-connections"])
	if err != nil || connections < 1 || connections > 100 {
		return config{}, fmt.Errorf("--backend-connections: want a number from 1 to 100, got %q", *values["backend-connections"])
	}
	origins, err := parseOrigins(*values["cors-origins"])
	if err != nil {
		return config{}, err
	}
	cfg := config{
		listen:      *values["listen"],
		backend:     *values["backend"],
		connections: connections,
		corsOrigins: origins,
		delay:       durations[0],
		grace:       durations[1],
		logFormat:   *values["log-format"],
		readTimeout: requestReadTimeout,
	}
	if cfg.backend == "" {
		return config{}, errors.New("--backend is empty")
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return config{}, fmt.Errorf("--log-format: want text or json, got %q", cfg.logFormat)
	}
	return cfg, nil
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// run serves on listener until ctx ends, then shuts down: /healthz fails at once; after
// cfg.delay streams end with UNAVAILABLE / SHUTTING_DOWN, the listener closes, and unary calls in
// flight get cfg.grace to finish.
func run(ctx context.Context, cfg config, listener net.Listener, logger *slog.Logger) error {
	b, err := dialBackends(cfg.backend, cfg.connections)
	if err != nil {
		return fmt.Errorf("backend %q: %w", cfg.backend, err)
	}
	defer b.Close()
	draining := make(chan struct{})
	transcoder, err := newTranscoder(newProxy(b, tableServiceDescriptor(), draining, logger))
	if err != nil {
		return fmt.Errorf("transcoder: %w", err)
	}
	h := &health{client: healthpb.NewHealthClient(b.conns[0]), logger: logger}
	routes, err := restRoutes(tableServiceDescriptor())
	if err != nil {
		return fmt.Errorf("REST routes: %w", err)
	}
	api := withReadDeadline(cfg.readTimeout, withRESTChecks(routes, logger, transcoder))

	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true) // native gRPC clients may use the gateway too
	server := &http.Server{
		Handler:           newHandler(api, h, cfg.corsOrigins),
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "delay", cfg.delay.String(), "grace", cfg.grace.String())
	h.draining.Store(true)
	select {
	case <-time.After(cfg.delay):
	case err := <-served:
		return err
	}
	close(draining)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.grace)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		logger.Warn("calls still open after the grace period; closing them", "error", err)
		_ = server.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// announce writes the first line on stdout, the one scripts read the address from (as they do
// the server's): a JSON line, with the address as its own field, when the logs are JSON lines.
func announce(w io.Writer, format string, address net.Addr) {
	listening := fmt.Sprintf("hearts-gateway listening on %s", address)
	if format == "json" {
		newLogger("json", w).Info(listening, "address", address.String())
		return
	}
	fmt.Fprintln(w, listening)
}

func main() {
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearts-gateway:", err)
		os.Exit(2)
	}
	logger := newLogger(cfg.logFormat, os.Stderr)
	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		logger.Error("cannot listen", "address", cfg.listen, "error", err)
		os.Exit(1)
	}
	announce(os.Stdout, cfg.logFormat, listener.Addr())
	cors := "off (same-origin pages only)"
	if len(cfg.corsOrigins) > 0 {
		cors = fmt.Sprint(cfg.corsOrigins)
	}
	logger.Info("serving gRPC-Web, Connect and REST", "address", listener.Addr().String(), "backend", cfg.backend, "cors_origins", cors)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, listener, logger); err != nil {
		logger.Error("gateway failed", "error", err)
		os.Exit(1)
	}
}
