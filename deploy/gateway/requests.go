package main

import (
	"net/http"
	"time"
)

// requestReadTimeout is how long a client has to send a request's body, once its headers are
// in (ReadHeaderTimeout bounds those). A request of hearts.v1 is one small message.
const requestReadTimeout = 15 * time.Second

// withReadDeadline gives each request timeout to arrive whole: reading its body fails after
// that, which ends the call. Without a deadline a client that announces a body and never sends
// it would hold the call, and its goroutines, for as long as it kept the connection open.
//
// The deadline bounds the request only: once the body has been read, net/http lifts it (HTTP/1.1)
// or it has nothing left to end (HTTP/2, where it is the stream's), so a response stream
// (WatchTable) lasts as long as it needs to; TestStreamsOutliveTheReadDeadline checks both.
// Every method of hearts.v1 takes a single request message; a client-streaming method would
// need an exception here.
func withReadDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An error means no deadlines (not net/http's server: a test's recorder).
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		next.ServeHTTP(w, r)
	})
}
