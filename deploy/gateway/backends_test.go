package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// holdingBackend stands in for the server where its real limit cannot be reached cheaply: its
// WatchTable sends a snapshot and stays open, like the server's, and its connections carry as
// few calls at once as it is told (the server: 1000).
type holdingBackend struct {
	heartsv1.UnimplementedTableServiceServer
	// watching counts the WatchTable streams open, if set.
	watching *atomic.Int64
}

func (holdingBackend) GetTable(context.Context, *heartsv1.GetTableRequest) (*heartsv1.GetTableResponse, error) {
	return &heartsv1.GetTableResponse{View: &heartsv1.TableView{}}, nil
}

// slowBackend answers GetTable after a delay.
type slowBackend struct {
	heartsv1.UnimplementedTableServiceServer
	delay time.Duration
}

func (b slowBackend) GetTable(ctx context.Context, _ *heartsv1.GetTableRequest) (*heartsv1.GetTableResponse, error) {
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &heartsv1.GetTableResponse{View: &heartsv1.TableView{}}, nil
}

func (b holdingBackend) WatchTable(_ *heartsv1.WatchTableRequest, stream heartsv1.TableService_WatchTableServer) error {
	if b.watching != nil {
		b.watching.Add(1)
		defer b.watching.Add(-1)
	}
	snapshot := &heartsv1.WatchTableResponse{Kind: &heartsv1.WatchTableResponse_Snapshot{Snapshot: &heartsv1.TableView{}}}
	if err := stream.Send(snapshot); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

func startHoldingBackend(t *testing.T, streamsPerConnection uint32) string {
	t.Helper()
	return startBackend(t, streamsPerConnection, holdingBackend{})
}

func startBackend(t *testing.T, streamsPerConnection uint32, backend heartsv1.TableServiceServer) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer(grpc.MaxConcurrentStreams(streamsPerConnection))
	heartsv1.RegisterTableServiceServer(server, backend)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	return listener.Addr().String()
}

// Open streams fill a connection to the backend: one more call over it waits until a stream
// ends. With a second connection the gateway sends it there instead.
func TestCallsPastAConnectionsStreamLimitTakeAnother(t *testing.T) {
	backend := startHoldingBackend(t, 2)
	for _, c := range []struct {
		connections int
		getTable    bool
	}{{1, false}, {2, true}} {
		cfg := testConfig(backend)
		cfg.connections = c.connections
		base, stop := startGateway(t, cfg)
		watch := connect.NewClient[heartsv1.WatchTableRequest, heartsv1.WatchTableResponse](
			http.DefaultClient, base+heartsv1.TableService_WatchTable_FullMethodName, connect.WithGRPCWeb())
		get := connect.NewClient[heartsv1.GetTableRequest, heartsv1.GetTableResponse](
			http.DefaultClient, base+heartsv1.TableService_GetTable_FullMethodName, connect.WithGRPCWeb())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var streams []*connect.ServerStreamForClient[heartsv1.WatchTableResponse]
		for range 2 {
			stream, err := watch.CallServerStream(ctx, connect.NewRequest(&heartsv1.WatchTableRequest{Name: "tables/x"}))
			if err != nil {
				t.Fatal(err)
			}
			if !stream.Receive() {
				t.Fatalf("%d connections: no snapshot: %v", c.connections, stream.Err())
			}
			streams = append(streams, stream)
		}
		getCtx, getCancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := get.CallUnary(getCtx, connect.NewRequest(&heartsv1.GetTableRequest{Name: "tables/x"}))
		getCancel()
		if c.getTable && err != nil {
			t.Errorf("%d connections, 2 streams open: GetTable failed: %v", c.connections, err)
		}
		if !c.getTable && connect.CodeOf(err) != connect.CodeDeadlineExceeded {
			t.Errorf("%d connection, 2 streams open: GetTable %v; want it held back (the reason for more connections)", c.connections, err)
		}
		for _, stream := range streams {
			_ = stream.Close()
		}
		cancel()
		stop()
	}
}

// recordingBackend keeps the metadata of its last GetTable.
type recordingBackend struct {
	heartsv1.UnimplementedTableServiceServer
	metadata chan metadata.MD
}

func (b recordingBackend) GetTable(ctx context.Context, _ *heartsv1.GetTableRequest) (*heartsv1.GetTableResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	b.metadata <- md
	return &heartsv1.GetTableResponse{View: &heartsv1.TableView{}}, nil
}

// What reaches the backend of a browser's request: the call's own headers, not the browser's;
// the user-agent is gRPC-Go's.
func TestTheBackendSeesTheCallsMetadata(t *testing.T) {
	backend := recordingBackend{metadata: make(chan metadata.MD, 1)}
	base, _ := startGateway(t, testConfig(startBackend(t, 100, backend)))
	get := connect.NewClient[heartsv1.GetTableRequest, heartsv1.GetTableResponse](
		http.DefaultClient, base+heartsv1.TableService_GetTable_FullMethodName, connect.WithGRPCWeb())
	request := connect.NewRequest(&heartsv1.GetTableRequest{Name: "tables/x"})
	request.Header().Set("Authorization", "Bearer seat-token")
	request.Header().Set("X-Request-Tag", "kept")
	request.Header().Set("User-Agent", "Mozilla/5.0 (browser)")
	request.Header().Set("Cookie", "session=secret")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := get.CallUnary(ctx, request); err != nil {
		t.Fatal(err)
	}
	md := <-backend.metadata
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer seat-token" {
		t.Errorf("authorization %q", got)
	}
	if got := md.Get("x-request-tag"); len(got) != 1 || got[0] != "kept" {
		t.Errorf("x-request-tag %q", got)
	}
	if got := md.Get("cookie"); len(got) != 0 {
		t.Errorf("cookie forwarded: %q", got)
	}
	if got := strings.Join(md.Get("user-agent"), ", "); !strings.HasPrefix(got, "grpc-go/") || strings.Contains(got, "Mozilla") {
		t.Errorf("user-agent %q, want gRPC-Go's alone", got)
	}
	if got := md.Get("x-forwarded-for"); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Errorf("x-forwarded-for %q", got)
	}
}
