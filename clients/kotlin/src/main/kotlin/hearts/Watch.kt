/*
 * A table's watch stream that resumes by itself, as docs/guide.md ("Disconnects") asks of every
 * client: the loop each app would otherwise write around `watchTable`, and the one a phone needs
 * most, whose network drops whenever it changes hands.
 *
 * When the stream fails with an error that says the server or the network failed (not the
 * request), it is opened again after a backoff with `afterSequence` set to the last stored
 * sequence delivered; stored events at or below it are skipped, so the collector sees no gap and
 * no repeat. Reactions, presence changes and heartbeats are not stored: each repeats the sequence
 * before it and is never sent again, so they are passed on as they come. The same semantics as
 * the TypeScript client's `watchTableResumable` and the Python client's `watch`.
 *
 * Upstream errors only are looked at: an exception thrown by the collector (a failed `playCard`
 * in the collect block, say) goes back to it untouched and never reopens the stream.
 */
package hearts

import com.google.protobuf.duration
import hearts.v1.TableEvent
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.WatchTableResponse
import hearts.v1.watchTableRequest
import io.grpc.Metadata
import io.grpc.Status
import io.grpc.StatusException
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.catch
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.transformWhile

/** The longest wait between two attempts. */
private val MAX_BACKOFF = 10.seconds

private val UNSTORED = setOf(TableEvent.EventCase.REACTION, TableEvent.EventCase.PRESENCE_CHANGED)

/** RESOURCE_EXHAUSTED reasons that are the caller's own limits: trying again at once does not help. */
private val NOT_NOW = setOf("TOO_MANY_REACTIONS", "TOO_MANY_TABLES", "TOO_MANY_STREAMS_FROM_ADDRESS")

/**
 * The table [name]'s watch stream, opened again after failures; see the file comment. Each
 * collection opens its own stream from [afterSequence] (unset: a snapshot first).
 *
 * - [seatToken] goes with every attempt as `authorization: Bearer <token>`, for the seat's own
 *   view and private events; leave it null for a spectator, or when the stub carries the token.
 * - [heartbeatInterval] (5 s to 10 min) asks for a heartbeat whenever the stream is quiet that
 *   long.
 * - After a failure that may pass (UNAVAILABLE, DEADLINE_EXCEEDED, a bare CANCELLED, the
 *   server's own RESOURCE_EXHAUSTED limits) the stream is opened again after [firstBackoff],
 *   doubled per failure in a row up to 10 s, each wait shortened at random by up to half.
 *   A message resets the count; the [maxReconnects]+1st failure in a row is thrown, as is any
 *   other error (a [StatusException]).
 * - A resumed stream may start with a new snapshot (the server no longer holds the missed
 *   events): take it as the current state.
 * - The flow completes after a `tableDeleted` event, or when the server ends the stream. Cancel
 *   the collecting coroutine to hang up: the call is cancelled, no attempt follows, and no
 *   error is raised beyond the coroutine's own cancellation.
 *
 * The stream gets no deadline even when the stub has one (`withDeadlineAfter`): a watch lasts as
 * long as the player watches. Shutting the channel down under it fails it with UNAVAILABLE, which
 * is retried, so cancel the collection first.
 */
fun TableServiceCoroutineStub.watchTableResumable(
    name: String,
    afterSequence: Long? = null,
    seatToken: String? = null,
    heartbeatInterval: Duration? = null,
    maxReconnects: Int = 5,
    firstBackoff: Duration = 200.milliseconds,
): Flow<WatchTableResponse> {
    require(maxReconnects >= 0) { "maxReconnects is $maxReconnects; it must be 0 or more" }
    require(!firstBackoff.isNegative()) { "firstBackoff is $firstBackoff; it must be 0 or more" }
    val stub = withDeadline(null)
    return flow {
        var last = afterSequence
        var failures = 0
        while (true) {
            val request = watchTableRequest {
                this.name = name
                last?.let { this.afterSequence = it }
                heartbeatInterval?.toComponents { seconds, nanoseconds ->
                    this.heartbeatInterval = duration {
                        this.seconds = seconds
                        nanos = nanoseconds
                    }
                }
            }
            // A new Metadata per call: grpc-java adds to the one a call starts with.
            val headers = seatToken?.let(::bearer) ?: Metadata()
            var failure: StatusException? = null
            stub.watchTable(request, headers)
                .transformWhile { message ->
                    emit(message)
                    !message.event.hasTableDeleted()
                }
                // Upstream of collect, so that the collector's own exceptions pass through.
                .catch { error -> failure = error as? StatusException ?: throw error }
                .collect { message ->
                    failures = 0
                    when {
                        message.hasEvent() && message.event.eventCase in UNSTORED -> emit(message)
                        message.hasEvent() || message.hasSnapshot() -> {
                            val seen = last
                            // A stored event delivered before the stream was resumed.
                            if (message.hasEvent() && seen != null && message.sequence <= seen) return@collect
                            last = message.sequence
                            emit(message)
                        }
                        else -> emit(message) // a heartbeat: the sequence of the last event, nothing to keep
                    }
                }
            val error = failure ?: return@flow // the server ended the stream, or table_deleted came
            // A collector that hung up sees its own cancellation, not the call's CANCELLED.
            currentCoroutineContext().ensureActive()
            failures += 1
            if (!resumable(error) || failures > maxReconnects) throw error
            delay(backoff(firstBackoff, failures, MAX_BACKOFF))
        }
    }
}

/** Whether a failed stream may be opened again: the server or the network failed, not the request. */
private fun resumable(error: StatusException): Boolean {
    val reason = errorReason(error)
    return when (error.status.code) {
        Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED -> true
        // Without a reason: a message over the size limit, which comes again.
        Status.Code.RESOURCE_EXHAUSTED -> reason != null && reason !in NOT_NOW
        // The server shedding the call (the collector's own hang-up is told apart before).
        Status.Code.CANCELLED -> reason == null
        else -> false
    }
}
