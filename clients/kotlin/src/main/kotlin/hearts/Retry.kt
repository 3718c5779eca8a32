/*
 * Unary calls tried again after failures that may pass, as the Python client's calls are: the
 * loop each app would otherwise write around a call, and the one a phone needs most, whose
 * network drops whenever it changes hands. The watch stream has its own (Watch.kt).
 *
 * What may be tried again follows from what the server may have done:
 * - a read (GetTable, ListTables, ListPlayerTables, SuggestMove) changes nothing;
 * - a mutation with a request_id (AIP-155) is answered from the server's memory when it was
 *   applied already, so it never acts twice: the helper gives one an id when it has none, once,
 *   and every attempt sends that same request;
 * - a call that acts without a request_id (SendReaction) is tried again only when the server
 *   refused it before it ran; after a lost answer it may have acted.
 *
 * The app's own cancellation is never taken for a failure: it ends the helper at once, even
 * while it waits to try again.
 */
package hearts

import com.google.protobuf.Descriptors.FieldDescriptor
import com.google.protobuf.Message
import hearts.v1.GetTableRequest
import hearts.v1.ListPlayerTablesRequest
import hearts.v1.ListTablesRequest
import hearts.v1.SuggestMoveRequest
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.WatchTableRequest
import io.grpc.Deadline
import io.grpc.Status
import io.grpc.StatusException
import java.util.UUID
import java.util.concurrent.TimeUnit
import kotlin.random.Random
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive

/** The longest wait between two attempts of a unary call (the Python client's). */
private val MAX_BACKOFF = 5.seconds

/**
 * How [retrying] tries a call again: at most [maxRetries] times more (0: once only), after
 * [firstBackoff] the first time, doubled each time up to 5 s, each wait shortened at random by up
 * to half. With [attemptTimeout], each attempt has that long (and no longer than the stub's own
 * deadline, which bounds them all); one that runs out is tried again like a lost answer.
 */
data class RetryOptions(
    val maxRetries: Int = 3,
    val firstBackoff: Duration = 200.milliseconds,
    val attemptTimeout: Duration? = null,
) {
    init {
        require(maxRetries >= 0) { "maxRetries is $maxRetries; it must be 0 or more" }
        require(!firstBackoff.isNegative()) { "firstBackoff is $firstBackoff; it must be 0 or more" }
        require(attemptTimeout == null || attemptTimeout.isPositive()) {
            "attemptTimeout is $attemptTimeout; it must be more than 0, or null for none"
        }
    }
}

/**
 * The answer of [call] on [request], tried again after failures that may pass; see the file
 * comment for which calls are. [call] makes one attempt on the stub it is given (this stub, with
 * the attempt's deadline when [RetryOptions.attemptTimeout] is set), for example
 * `stub.retrying(request) { playCard(it) }`, or `{ deleteTable(it, bearer(creatorToken)) }`:
 * metadata made inside the block is made anew for each attempt, as grpc-java needs.
 *
 * - A request with an empty `request_id` is copied with a random UUID in it, once, and every
 *   attempt sends that copy; [request] itself is left as it was. A `request_id` the caller set is
 *   kept: an app that tries again itself must send the same one again.
 * - Tried again: `UNAVAILABLE` and `DEADLINE_EXCEEDED` (of the attempt) for reads and for
 *   mutations with a `request_id`; `ABORTED` / `CONFLICT` for those mutations; `RESOURCE_EXHAUSTED`
 *   / `OVERLOADED` and a bare `CANCELLED` (a saturated or stopping server refusing the call before
 *   it ran) for every call, `sendReaction` included. Nothing else: that error, and the last
 *   attempt's once the retries are used up, is thrown as it came, a [StatusException].
 * - The stub's deadline (`withDeadlineAfter`) bounds all attempts: a wait that would pass it is
 *   not begun, and the last error is thrown at once.
 * - Cancelling the calling coroutine (`withTimeout` included) ends it at once, during a call or a
 *   wait, with the coroutine's `CancellationException`, never a retry.
 *
 * Not for `watchTable`: [watchTableResumable] resumes a watch.
 */
suspend fun <Req : Message, Resp> TableServiceCoroutineStub.retrying(
    request: Req,
    options: RetryOptions = RetryOptions(),
    call: suspend TableServiceCoroutineStub.(Req) -> Resp,
): Resp {
    require(request !is WatchTableRequest) { "retrying is for unary calls; watchTableResumable resumes a watch" }
    val kind = kindOf(request)
    val sent = withRequestId(request)
    var retries = 0
    while (true) {
        val stub = options.attemptTimeout?.let(::withAttemptDeadline) ?: this
        val error = try {
            return stub.call(sent)
        } catch (e: StatusException) {
            e
        }
        // The app's own cancellation can end a call with CANCELLED just before the coroutine
        // sees it: that is the app's, never a failure to try again.
        currentCoroutineContext().ensureActive()
        if (retries >= options.maxRetries || !retryable(error, kind)) throw error
        retries += 1
        val wait = backoff(options.firstBackoff, retries, MAX_BACKOFF)
        val deadline = callOptions.deadline
        if (deadline != null && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= wait.inWholeNanoseconds) throw error
        delay(wait)
    }
}

/** What the server may have done with a call that failed, by what the call does. */
private enum class Kind {
    /** Changes nothing. */
    READ,

    /** Acts, and carries a request_id: a repeat is answered from the server's memory. */
    IDEMPOTENT,

    /** Acts, without a request_id: repeated only when it surely did not run. */
    ONCE,
}

private fun kindOf(request: Message): Kind = when {
    request is GetTableRequest || request is ListTablesRequest ||
        request is ListPlayerTablesRequest || request is SuggestMoveRequest -> Kind.READ
    requestIdField(request) != null -> Kind.IDEMPOTENT
    // A call not named above and without a request_id may act: the careful class.
    else -> Kind.ONCE
}

private fun requestIdField(request: Message): FieldDescriptor? =
    request.descriptorForType.findFieldByName("request_id")
        ?.takeIf { it.type == FieldDescriptor.Type.STRING && !it.isRepeated }

/** [request], or a copy of it with a new request_id when it takes one and has none. */
private fun <Req : Message> withRequestId(request: Req): Req {
    val field = requestIdField(request) ?: return request
    if ((request.getField(field) as String).isNotEmpty()) return request
    // toBuilder().build() of a generated message is of the message's own class.
    @Suppress("UNCHECKED_CAST")
    return request.toBuilder().setField(field, UUID.randomUUID().toString()).build() as Req
}

/** This stub with a deadline [timeout] from now, or the stub's own when that comes first. */
private fun TableServiceCoroutineStub.withAttemptDeadline(timeout: Duration): TableServiceCoroutineStub {
    val attempt = Deadline.after(timeout.inWholeNanoseconds, TimeUnit.NANOSECONDS)
    return withDeadline(callOptions.deadline?.minimum(attempt) ?: attempt)
}

private fun retryable(error: StatusException, kind: Kind): Boolean {
    val reason = errorReason(error)
    return when (error.status.code) {
        // The answer may have been lost after the call acted.
        Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED -> kind != Kind.ONCE
        // The server shedding load before running the call; its other limits are the caller's
        // own (TOO_MANY_REACTIONS, ...), and a bare one is a request over the size limit.
        Status.Code.RESOURCE_EXHAUSTED -> reason == "OVERLOADED"
        // gRPC's own refusal of a call past a saturated server's pending-call limit, or on a
        // stopping server (the app's own cancellation is told apart before this).
        Status.Code.CANCELLED -> reason == null
        // Too contended to commit, nothing applied; ETAG_MISMATCH needs the app to read again.
        Status.Code.ABORTED -> kind == Kind.IDEMPOTENT && reason == "CONFLICT"
        else -> false
    }
}

/**
 * The wait before attempt [failures] + 1: [first] doubled per failure up to [max], times 0.5 to 1
 * ("equal jitter", so that clients cut off together do not come back together).
 */
internal fun backoff(first: Duration, failures: Int, max: Duration): Duration {
    // The doubling stops at 2^30 (the cap is long passed by then, unless [first] is 0).
    val full = minOf(max, first * (1L shl (minOf(failures, 31) - 1)).toDouble())
    return full * Random.nextDouble(0.5, 1.0)
}
