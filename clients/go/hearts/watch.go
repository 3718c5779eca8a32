package hearts

// A table's stream that resumes by itself, as docs/guide.md ("Disconnects") asks of every
// client: the one loop each app would otherwise write around TableServiceClient.WatchTable. It
// follows the TypeScript client's watchTableResumable: the same errors are resumed, with the
// same backoff, and the same messages are kept track of.

import (
	"context"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// errorDomain is the ErrorInfo domain of every error the Hearts server returns.
const errorDomain = "hearts.v1"

// maxBackoff caps the wait before a new attempt, however many attempts failed in a row.
const maxBackoff = 10 * time.Second

// A WatchOption changes how WatchTable resumes a failed stream.
type WatchOption func(*watchOptions)

type watchOptions struct {
	maxReconnects int
	backoff       time.Duration
}

// WithMaxReconnects sets how many times in a row (5 by default) WatchTable opens a failed stream
// again before it yields the error; a stream that delivers a message starts the count afresh.
// 0 never opens one again.
func WithMaxReconnects(n int) WatchOption {
	return func(o *watchOptions) { o.maxReconnects = max(n, 0) }
}

// WithBackoff sets the wait before the first new attempt (200 ms by default). Each failure in a
// row doubles it, up to 10 s, and each wait is a random 50% to 100% of it, so that the clients
// of a restarted server do not all come back at once.
func WithBackoff(first time.Duration) WatchOption {
	return func(o *watchOptions) { o.backoff = max(first, 0) }
}

// WatchTable is req's table stream (the caller's view, then every event the caller may see)
// that opens itself again when it fails with an error of the server or the network, not of the
// request: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED for the server's limits (not the
// caller's own: TOO_MANY_REACTIONS, TOO_MANY_TABLES, TOO_MANY_STREAMS_FROM_ADDRESS), and a bare
// CANCELLED that ctx did not cause. Each new stream asks for the events after the last
// snapshot or stored event delivered, and events already delivered are skipped, so the caller
// sees no gap and no repeat. A reaction, a presence change or a heartbeat has no number of its
// own (it repeats the number before it) and is never sent again, so it is passed on as it comes.
// A resumed stream may start with a new snapshot (when the server no longer holds the missed
// events): take it as the current state.
//
// Every message is yielded with a nil error. The iteration ends after a TableDeletedEvent, when
// the server ends the stream, or when the loop stops; it ends without an error when ctx is
// cancelled (cancel it to hang up). Any other error is yielded once, with a nil message, as the
// last item: a refused request at once, a failure of the server or the network after
// WithMaxReconnects attempts in a row have failed, DEADLINE_EXCEEDED when ctx had a deadline
// that passed. Cancel ctx before closing the connection: a connection closed under the watch
// fails it with a bare CANCELLED, which is retried until WithMaxReconnects runs out.
//
// req is not changed: name, after_sequence (unset: a snapshot first) and heartbeat_interval are
// the first attempt's. Put a seat token on ctx with WithToken for the seat's own view and its
// private events. Give ctx no deadline: a stream runs for as long as the player watches. Each
// range over the result watches anew from req.
func WatchTable(ctx context.Context, client heartsv1.TableServiceClient, req *heartsv1.WatchTableRequest,
	opts ...WatchOption) iter.Seq2[*heartsv1.WatchTableResponse, error] {
	options := watchOptions{maxReconnects: 5, backoff: 200 * time.Millisecond}
	for _, opt := range opts {
		opt(&options)
	}
	return func(yield func(*heartsv1.WatchTableResponse, error) bool) {
		w := &watch{client: client, req: req, options: options}
		if req.AfterSequence != nil {
			w.last = proto.Int64(req.GetAfterSequence())
		}
		for {
			stop, err := w.stream(ctx, yield)
			if stop {
				return
			}
			if ctx.Err() != nil {
				expired(ctx, yield)
				return
			}
			w.failures++
			if !resumable(err) || w.failures > options.maxReconnects {
				yield(nil, err)
				return
			}
			if !pause(ctx, w.delay()) {
				expired(ctx, yield)
				return
			}
		}
	}
}

// expired yields DEADLINE_EXCEEDED when ctx (done) passed its deadline: unlike a cancel, which
// is the app hanging up, a deadline ending the watch is a mistake the app should hear of.
func expired(ctx context.Context, yield func(*heartsv1.WatchTableResponse, error) bool) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		yield(nil, status.FromContextError(ctx.Err()).Err())
	}
}

// watch is one iteration's state across its streams.
type watch struct {
	client   heartsv1.TableServiceClient
	req      *heartsv1.WatchTableRequest
	options  watchOptions
	last     *int64 // the sequence of the last snapshot or stored event delivered
	failures int    // failed streams since the last message
}

// stream opens one stream and delivers its messages. It returns stop when the iteration is over
// (the loop stopped, the table was deleted, the server ended the stream), and otherwise the
// error the stream failed with.
func (w *watch) stream(ctx context.Context, yield func(*heartsv1.WatchTableResponse, error) bool) (stop bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the call when the loop stops or the stream failed
	req := proto.CloneOf(w.req)
	if w.last != nil {
		req.AfterSequence = proto.Int64(*w.last)
	}
	stream, err := w.client.WatchTable(ctx, req)
	if err != nil {
		return false, err
	}
	for {
		message, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return true, nil // the server ended the stream (it does after table_deleted)
		}
		if err != nil {
			return false, err
		}
		w.failures = 0
		switch message.GetKind().(type) {
		case *heartsv1.WatchTableResponse_Snapshot:
			w.last = proto.Int64(message.GetSequence()) // the view as of this sequence
		case *heartsv1.WatchTableResponse_Event:
			event := message.GetEvent()
			if event.GetReaction() == nil && event.GetPresenceChanged() == nil {
				if w.last != nil && message.GetSequence() <= *w.last {
					continue // delivered before the stream was opened again
				}
				w.last = proto.Int64(message.GetSequence())
			}
		default:
			// A heartbeat (or a kind this client does not know): it repeats the last event's
			// sequence, so there is nothing to keep.
		}
		if !yield(message, nil) || message.GetEvent().GetTableDeleted() != nil {
			return true, nil
		}
	}
}

// delay is the wait before the next attempt after w.failures failures in a row.
func (w *watch) delay() time.Duration {
	return jittered(w.options.backoff, w.failures, maxBackoff)
}

// jittered is the wait after n failures in a row: first, doubled per failure after the first,
// at most ceiling, times a random 0.5 to 1 ("equal jitter"), so that the clients of a restarted
// server do not all come back at once. RetryUnary waits the same way.
func jittered(first time.Duration, n int, ceiling time.Duration) time.Duration {
	d := first
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
}

// pause waits for d, and reports false when ctx is done first.
func pause(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// notNow are the RESOURCE_EXHAUSTED reasons that are the caller's own limits: trying again at
// once does not help.
var notNow = map[string]bool{
	"TOO_MANY_REACTIONS":            true,
	"TOO_MANY_TABLES":               true,
	"TOO_MANY_STREAMS_FROM_ADDRESS": true,
}

// serverReason is the ErrorInfo reason of an error the Hearts server returned, or "" for none
// (a status of gRPC itself, such as the bare CANCELLED of a shed call) or another domain's.
func serverReason(err error) string {
	if info := errorInfo(err); info != nil && info.GetDomain() == errorDomain {
		return info.GetReason()
	}
	return ""
}

// resumable reports whether a failed stream may be opened again: the server or the network
// failed, not the request (docs/guide.md, the retry table).
func resumable(err error) bool {
	reason := serverReason(err)
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	case codes.ResourceExhausted:
		return reason != "" && !notNow[reason] // none: a message over the size limit
	case codes.Canceled:
		return reason == "" // the server shed the call (a cancel of ctx is seen before)
	default:
		return false
	}
}
