package conformance_test

import (
	"net"
	"sync"
	"testing"
	"time"
)

// relay forwards TCP connections from a loopback port to a server. It plays the network failing
// in two ways: cut, the network gone without a word (keepalive_test.go), and muteAnswers then
// hangUp, an answer lost before the connection dropped (retry_test.go).
type relay struct {
	listener net.Listener
	upstream string
	closed   chan struct{} // closed when the test ends

	mu      sync.Mutex
	isCut   bool
	muted   bool // the server's bytes are read and dropped
	sockets []net.Conn
	wg      sync.WaitGroup
}

// startRelay listens on a free loopback port and forwards each connection to upstream. It closes
// everything when the test ends.
func startRelay(t *testing.T, upstream string) *relay {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("relay: listen: %v", err)
	}
	r := &relay{listener: listener, upstream: upstream, closed: make(chan struct{})}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(r.close)
	return r
}

func (r *relay) address() string { return r.listener.Addr().String() }

// cut stops forwarding, both ways and on every connection, and leaves every socket open: neither
// side hears anything more, not even that the other is gone.
func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.isCut = true
}

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		downstream, err := r.listener.Accept()
		if err != nil {
			return // closed
		}
		if !r.keep(downstream) {
			continue // cut: the connection goes nowhere
		}
		upstream, err := net.DialTimeout("tcp", r.upstream, 5*time.Second)
		if err != nil {
			_ = downstream.Close()
			continue
		}
		r.keep(upstream)
		r.wg.Add(2)
		go r.forward(upstream, downstream, false)
		go r.forward(downstream, upstream, true)
	}
}

// muteAnswers drops everything the server sends from now on, on every connection, and forwards
// what the client sends: the server acts on a call whose answer never arrives.
func (r *relay) muteAnswers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.muted = true
}

// hangUp closes every connection so far, as a network that drops them does, and forwards the
// next ones in full again.
func (r *relay) hangUp() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.muted = false
	for _, socket := range r.sockets {
		_ = socket.Close()
	}
	r.sockets = nil
}

// keep records a socket to close when the test ends, and reports whether the relay still forwards.
func (r *relay) keep(socket net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sockets = append(r.sockets, socket)
	return !r.isCut
}

// forward copies src to dst until either closes, or the relay is cut: from then on it reads and
// writes nothing, and closes nothing, until the test ends. While the relay is muted, it drops
// what it reads if src is the server (answers).
func (r *relay) forward(dst, src net.Conn, answers bool) {
	defer r.wg.Done()
	buffer := make([]byte, 32<<10)
	for {
		n, readErr := src.Read(buffer)
		r.mu.Lock()
		isCut := r.isCut
		var writeErr error
		if !isCut && n > 0 && !(answers && r.muted) {
			_, writeErr = dst.Write(buffer[:n])
		}
		r.mu.Unlock()
		switch {
		case isCut:
			<-r.closed
			return
		case readErr != nil || writeErr != nil:
			// Before the cut a closed side is passed on, as a working network does.
			_ = dst.Close()
			_ = src.Close()
			return
		}
	}
}

func (r *relay) close() {
	close(r.closed)
	_ = r.listener.Close()
	r.mu.Lock()
	for _, socket := range r.sockets {
		_ = socket.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
