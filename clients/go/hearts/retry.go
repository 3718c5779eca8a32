package hearts

// Unary calls tried again where that is safe, as docs/guide.md ("Disconnects") asks of every
// client: the loop of the Python client's HeartsClient._call as a gRPC interceptor, so that the
// generated TableServiceClient retries without the app wrapping each call. A read is simply
// repeated; a mutation is sent again with the same request_id, so the server answers a retry of
// an applied call from its memory and never acts twice; SendReaction, which acts and has no
// request_id, is sent again only when the server said it did not run it.

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	heartsv1 "github.com/hearts-dev/hearts/clients/go/hearts/v1"
)

// maxRetryBackoff caps the wait before a retry: a unary call has an app waiting on it, so it
// gives up sooner than a watch does.
const maxRetryBackoff = 5 * time.Second

// A RetryOption changes how RetryUnary retries a failed call.
type RetryOption func(*retryOptions)

type retryOptions struct {
	maxRetries     int
	backoff        time.Duration
	attemptTimeout time.Duration
	// wait is pause, and a recorder in the tests, which check the waits without sleeping them.
	wait func(ctx context.Context, d time.Duration) bool
}

// WithMaxRetries sets how many times (3 by default) RetryUnary sends a failed call again before
// it returns the error; 0 sends every call once.
func WithMaxRetries(n int) RetryOption {
	return func(o *retryOptions) { o.maxRetries = max(n, 0) }
}

// WithRetryBackoff sets the wait before the first retry (200 ms by default). Each retry after it
// doubles it, up to 5 s, and each wait is a random 50% to 100% of it, so that the clients of a
// restarted server do not all come back at once.
func WithRetryBackoff(first time.Duration) RetryOption {
	return func(o *retryOptions) { o.backoff = max(first, 0) }
}

// WithAttemptTimeout gives each attempt a deadline of its own (none by default), so that an
// attempt stuck on a dead connection fails with DEADLINE_EXCEEDED and is retried while the
// call's context still has time. The context's own deadline bounds every attempt and wait.
func WithAttemptTimeout(d time.Duration) RetryOption {
	return func(o *retryOptions) { o.attemptTimeout = max(d, 0) }
}

// callKind is what sending a method's request again risks.
type callKind int

const (
	notRetried callKind = iota // a method of another service, or the WatchTable stream
	read                       // changes nothing: safe to repeat
	mutation                   // acts, with a request_id the server remembers: safe to repeat
	actsOnce                   // acts, without a request_id: only a call that never ran is repeated
)

var callKinds = map[string]callKind{
	heartsv1.TableService_GetTable_FullMethodName:         read,
	heartsv1.TableService_ListTables_FullMethodName:       read,
	heartsv1.TableService_ListPlayerTables_FullMethodName: read,
	heartsv1.TableService_SuggestMove_FullMethodName:      read,
	heartsv1.TableService_CreateTable_FullMethodName:      mutation,
	heartsv1.TableService_DeleteTable_FullMethodName:      mutation,
	heartsv1.TableService_JoinTable_FullMethodName:        mutation,
	heartsv1.TableService_LeaveTable_FullMethodName:       mutation,
	heartsv1.TableService_PassCards_FullMethodName:        mutation,
	heartsv1.TableService_PlayCard_FullMethodName:         mutation,
	heartsv1.TableService_RematchTable_FullMethodName:     mutation,
	heartsv1.TableService_QuickJoin_FullMethodName:        mutation,
	heartsv1.TableService_SendReaction_FullMethodName:     actsOnce,
}

// RetryUnary is a client interceptor that sends a TableService call again, after a backoff,
// when it failed in a way that says the server or the network failed, not the request. Add it
// when dialling: grpc.WithChainUnaryInterceptor(hearts.RetryUnary()).
//
//   - UNAVAILABLE and DEADLINE_EXCEEDED (of one attempt, see WithAttemptTimeout) are retried for
//     the reads (GetTable, ListTables, ListPlayerTables, SuggestMove) and the mutations
//     (CreateTable, DeleteTable, JoinTable, LeaveTable, PassCards, PlayCard, RematchTable,
//     QuickJoin), not for SendReaction: it may have acted.
//   - RESOURCE_EXHAUSTED with reason OVERLOADED, and a bare CANCELLED that ctx did not cause, are
//     the server refusing a call before running it: retried for every method, SendReaction too.
//   - ABORTED with reason CONFLICT (nothing was applied) is retried for the mutations.
//   - Nothing else is: not ETAG_MISMATCH (read the table again), not the caller's own limits
//     (TOO_MANY_REACTIONS, TOO_MANY_TABLES), not a refused request (INVALID_ARGUMENT, NOT_FOUND,
//     FAILED_PRECONDITION, ...). Such an error reaches the caller unchanged, and so does the
//     last attempt's error when the retries run out (WithMaxRetries, 3 by default).
//
// A mutation whose request_id is empty is sent with a random one (a version-4 UUID), the same on
// every attempt, on a copy of the request: the caller's message is never changed. A request_id
// the caller set is kept; keep it the same across the app's own retries of the same action.
// Every attempt sends ctx's metadata (the token of WithToken) and the call's options.
//
// ctx bounds it all. A call cancelled by ctx is not retried. When ctx is cancelled during a
// wait, the call returns at once with codes.Canceled, as a gRPC call cancelled under it does;
// when a wait would outlast ctx's deadline, the call returns the last attempt's error at once.
// Methods of other services, and streams, pass through untouched.
func RetryUnary(opts ...RetryOption) grpc.UnaryClientInterceptor {
	options := retryOptions{maxRetries: 3, backoff: 200 * time.Millisecond, wait: pause}
	for _, opt := range opts {
		opt(&options)
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		kind := callKinds[method]
		if kind == notRetried {
			return invoker(ctx, method, req, reply, cc, callOpts...)
		}
		if kind == mutation && options.maxRetries > 0 {
			req = withRequestID(req)
		}
		for retries := 0; ; retries++ {
			err := options.attempt(ctx, method, req, reply, cc, invoker, callOpts)
			if err == nil || ctx.Err() != nil || retries >= options.maxRetries || !retryable(kind, err) {
				return err
			}
			d := jittered(options.backoff, retries+1, maxRetryBackoff)
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= d {
				return err // the retry could not finish in time anyway
			}
			if !options.wait(ctx, d) {
				return status.FromContextError(ctx.Err()).Err()
			}
		}
	}
}

// attempt sends the call once, within the attempt timeout if there is one.
func (o *retryOptions) attempt(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, callOpts []grpc.CallOption) error {
	if o.attemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.attemptTimeout)
		defer cancel()
	}
	return invoker(ctx, method, req, reply, cc, callOpts...)
}

// retryable reports whether a call of kind that failed with err may be sent again (docs/guide.md,
// the retry table). The caller has checked that ctx did not end it.
func retryable(kind callKind, err error) bool {
	reason := serverReason(err)
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return kind != actsOnce // the call may have run, its answer lost
	case codes.ResourceExhausted:
		return reason == "OVERLOADED" // other reasons are the caller's limits, none a message too large
	case codes.Canceled:
		return reason == "" // gRPC shed the call before the server ran it
	case codes.Aborted:
		return kind == mutation && reason == "CONFLICT" // not ETAG_MISMATCH: the table moved on
	default:
		return false
	}
}

// requestIDHolder is a request with an AIP-155 request_id: every mutation's.
type requestIDHolder interface {
	proto.Message
	GetRequestId() string
}

// withRequestID is req, or when its request_id is empty a copy of it with a fresh one: every
// attempt then sends the same id, and the caller's message stays as it was.
func withRequestID(req any) any {
	holder, ok := req.(requestIDHolder)
	if !ok || holder.GetRequestId() != "" {
		return req
	}
	filled := proto.Clone(holder)
	message := filled.ProtoReflect()
	message.Set(message.Descriptor().Fields().ByName("request_id"), protoreflect.ValueOfString(newRequestID()))
	return filled
}

// newRequestID is a random (version 4) UUID; Go's standard library has no UUID of its own.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
