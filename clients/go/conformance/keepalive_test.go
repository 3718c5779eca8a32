package conformance_test

import (
	"context"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// deadConnectionBound is how long after the network's loss the stream must have failed: the
// keepalive below needs about 12 s (10 s without anything from the server, then 2 s for the
// ping's answer). Without keepalive the stream would wait forever.
const deadConnectionBound = 30 * time.Second

// TestKeepaliveEndsAWatchOnADeadConnection watches a table as a spectator through a relay on
// loopback, then cuts the relay: it forwards nothing more either way but keeps every socket open
// (no FIN, no RST), as a network that vanished does (a NAT entry dropped, a laptop asleep). With
// client keepalive pings (Time 10 s, the least the server accepts, Timeout 2 s) the stream's Recv
// fails with UNAVAILABLE within deadConnectionBound, and not before the 10 s without data: the
// client can resume with after_sequence instead of hanging.
func TestKeepaliveEndsAWatchOnADeadConnection(t *testing.T) {
	ctx, client := connect(t)
	seed := gameSeed(t)
	// Three bots and an empty seat: the game waits, so the stream is quiet after its snapshot.
	name := createTable(ctx, t, client, seed, humanSeat).GetView().GetTable().GetName()

	relay := startRelay(t, os.Getenv("HEARTS_SERVER"))
	conn, err := grpc.NewClient(relay.address(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 2 * time.Second}))
	if err != nil {
		t.Fatalf("dial the relay %s: %v", relay.address(), err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := heartsv1.NewTableServiceClient(conn).WatchTable(watchCtx, &heartsv1.WatchTableRequest{Name: name})
	if err != nil {
		t.Fatalf("WatchTable %s through the relay: %v", name, describe(err))
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatalf("WatchTable %s through the relay: %v", name, describe(err))
	}
	if first.GetSnapshot() == nil {
		t.Fatalf("the spectator's stream began with %v, want a snapshot", first)
	}
	received := time.Now()

	relay.cut()
	cutAt := time.Now()
	ended := make(chan error, 1)
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				ended <- err
				return
			}
		}
	}()

	select {
	case err := <-ended:
		elapsed := time.Since(cutAt)
		t.Logf("the stream failed %.1f s after the cut: %v", elapsed.Seconds(), err)
		if code := status.Code(err); code != codes.Unavailable {
			t.Fatalf("the stream on the dead connection ended with %v (%v), want UNAVAILABLE", code, err)
		}
		// Before the keepalive's 10 s without data, something else than the keepalive ended it
		// (say, the relay closed a socket): then this test proves nothing.
		if silent := time.Since(received); silent < 10*time.Second {
			t.Fatalf("the stream failed %.1f s after its last message, before any keepalive ping was due", silent.Seconds())
		}
	case <-time.After(deadConnectionBound):
		t.Fatalf("the stream on the dead connection had not failed %v after the cut (no keepalive?)", deadConnectionBound)
	}
}
