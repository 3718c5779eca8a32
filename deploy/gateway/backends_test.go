package main

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"

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
