package hearts

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestOnlyAFailureOfTheServerOrTheNetworkIsResumed checks the retry table of docs/guide.md, as
// the TypeScript client's resumable() reads it; the live tests in conformance/ cover the rest.
func TestOnlyAFailureOfTheServerOrTheNetworkIsResumed(t *testing.T) {
	failed := func(code codes.Code, domain, reason string) error {
		st := status.New(code, "test")
		if reason == "" {
			return st.Err()
		}
		st, err := st.WithDetails(&errdetails.ErrorInfo{Domain: domain, Reason: reason})
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{failed(codes.Unavailable, "", ""), true},
		{failed(codes.Unavailable, "hearts.v1", "STREAM_LAGGED"), true},
		{failed(codes.DeadlineExceeded, "", ""), true},
		{failed(codes.ResourceExhausted, "hearts.v1", "OVERLOADED"), true},
		{failed(codes.ResourceExhausted, "hearts.v1", "TOO_MANY_STREAMS"), true},
		{failed(codes.Canceled, "", ""), true},
		{failed(codes.ResourceExhausted, "hearts.v1", "TOO_MANY_REACTIONS"), false},
		{failed(codes.ResourceExhausted, "hearts.v1", "TOO_MANY_TABLES"), false},
		{failed(codes.ResourceExhausted, "hearts.v1", "TOO_MANY_STREAMS_FROM_ADDRESS"), false},
		{failed(codes.ResourceExhausted, "", ""), false}, // a message over the size limit
		{failed(codes.ResourceExhausted, "example.com", "OVERLOADED"), false},
		{failed(codes.Canceled, "hearts.v1", "CLIENT_CLOSED"), false},
		{failed(codes.NotFound, "hearts.v1", "TABLE_NOT_FOUND"), false},
		{failed(codes.Unauthenticated, "hearts.v1", "TOKEN_REVOKED"), false},
		{failed(codes.Unknown, "", ""), false},
		{errors.New("not a status"), false},
		{fmt.Errorf("wrapped: %w", failed(codes.Unavailable, "", "")), true},
	} {
		if got := resumable(c.err); got != c.want {
			t.Errorf("resumable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestTheBackoffDoublesUpToTenSecondsWithJitter checks each wait against the first (200 ms)
// doubled per failure in a row, at most 10 s, times a jitter of 0.5 to 1.
func TestTheBackoffDoublesUpToTenSecondsWithJitter(t *testing.T) {
	w := &watch{options: watchOptions{backoff: 200 * time.Millisecond}}
	for failures, full := range map[int]time.Duration{
		1: 200 * time.Millisecond, 2: 400 * time.Millisecond, 3: 800 * time.Millisecond,
		6: 6400 * time.Millisecond, 7: 10 * time.Second, 60: 10 * time.Second,
	} {
		w.failures = failures
		for range 100 {
			if d := w.delay(); d < full/2 || d > full {
				t.Fatalf("after %d failures: waited %v, want %v to %v", failures, d, full/2, full)
			}
		}
	}
}
