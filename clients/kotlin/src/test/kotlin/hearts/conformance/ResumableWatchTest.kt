/*
 * watchTableResumable against a live server at HEARTS_SERVER (skipped without one;
 * scripts/with-server.sh starts one and sets it), mirroring the TypeScript client's
 * watch.test.ts: a stream cut twice while the game goes on resumes to the same stored events as an
 * uncut one, without gaps or repeats; a refused stream is not opened again; hanging up ends the
 * flow quietly. Beside those: which failures are retried (the retry table of docs/guide.md), that
 * the collector's own exception is not taken for the stream's, and that a stub's deadline does
 * not reach the stream.
 *
 * The failures are made by [Cutter], an interceptor on the real channel that ends chosen streams
 * with a chosen status at a chosen message, as a dropped connection would, records the
 * `after_sequence` each stream asked for, and can ask the server for events the flow has
 * delivered already, to see them skipped.
 */
package hearts.conformance

import com.google.protobuf.Any
import com.google.rpc.ErrorInfo
import hearts.bearer
import hearts.v1.TableServiceGrpc
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.TableView
import hearts.v1.WatchTableRequest
import hearts.v1.WatchTableResponse
import hearts.v1.deleteTableRequest
import hearts.v1.joinTableRequest
import hearts.v1.passCardsRequest
import hearts.v1.playCardRequest
import hearts.v1.watchTableRequest
import hearts.watchTableResumable
import io.grpc.CallOptions
import io.grpc.Channel
import io.grpc.ClientCall
import io.grpc.ClientInterceptor
import io.grpc.ForwardingClientCall
import io.grpc.ForwardingClientCallListener
import io.grpc.ManagedChannel
import io.grpc.Metadata
import io.grpc.MethodDescriptor
import io.grpc.Status
import io.grpc.StatusException
import io.grpc.protobuf.StatusProto
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/** Bounds each test. */
private val TEST_TIMEOUT = 60.seconds

/** How long a stream may lag behind the calls. */
private val STREAM_WAIT = 10.seconds

/** Short waits between attempts, so that the tests do not sit out the default backoff. */
private val QUICK_BACKOFF = 10.milliseconds

class ResumableWatchTest {
    private lateinit var channel: ManagedChannel
    private lateinit var client: TableServiceCoroutineStub
    private val tablesToDelete = mutableListOf<Pair<String, String>>() // name to creator token

    @BeforeEach
    fun connect() {
        val address = System.getenv("HEARTS_SERVER")
        assumeTrue(!address.isNullOrEmpty(), "HEARTS_SERVER is unset; run under scripts/with-server.sh")
        channel = readmeChannel(address)
        client = TableServiceCoroutineStub(channel)
    }

    @AfterEach
    fun disconnect() {
        if (!::channel.isInitialized) return
        runBlocking {
            for ((name, creatorToken) in tablesToDelete) {
                client.deleteTable(deleteTableRequest { this.name = name }, bearer(creatorToken))
            }
        }
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
    }

    @Test
    fun `a stream cut twice mid-game resumes to the same stored events, without gaps or repeats`() = live {
        val game = newGame("cut twice")
        var view = game.view
        // Some history before the watch opens: the first cut falls in its replay.
        repeat(3) { view = game.move(view) }
        val liveFrom = view.sequence

        // The first stream ends after 4 messages (replayed events); the second at the first
        // event past liveFrom, which only a move made during the watch brings. The resumed
        // streams are asked for 3 events more than they want, which the flow must skip.
        val cutter = Cutter { stream ->
            when (stream) {
                0 -> Cut(unavailable()) { sent, _ -> sent == 4 }
                1 -> Cut(unavailable(), rewind = 3) { _, message -> message.sequence > liveFrom }
                else -> Cut(unavailable(), rewind = 3) { _, _ -> false }
            }
        }
        val reference = Collected(this, client.watchTable(watchTableRequest { name = game.name; afterSequence = 0 }, bearer(game.seatToken)))
        val resumed = Collected(
            this,
            client.withInterceptors(cutter)
                .watchTableResumable(game.name, afterSequence = 0, seatToken = game.seatToken, firstBackoff = QUICK_BACKOFF),
        )
        try {
            // A stream's presence events follow its replayed events: the second stream has
            // caught up with the table, so the moves below come to it live.
            resumed.waitFor("the second stream's presence events") { cutter.opened.size >= 2 && it.event.hasPresenceChanged() }
            repeat(4) { view = game.move(view) }
            val last = view.sequence
            assertTrue(last > liveFrom, "moves during the watch: $liveFrom, then $last")

            val want = reference.storedUntil(last)
            val got = resumed.storedUntil(last)
            assertTrue(want.zipWithNext().all { (a, b) -> a < b }, "the uncut stream's sequences increase: $want")
            assertEquals(last, want.last(), "the uncut stream ends at the last move")
            assertEquals(want, got, "the resumed stream's stored sequences are the uncut stream's")
            assertEquals(
                listOf(0L, want[3], want.last { it <= liveFrom }),
                cutter.opened,
                "each stream asks for the events after the last stored one delivered",
            )
            assertEquals(List(3) { "Bearer ${game.seatToken}" }, cutter.authorizations, "every stream carries the seat token")
        } finally {
            reference.stop()
            resumed.stop()
        }
    }

    @Test
    fun `a refused stream is not opened again`() = live {
        val cutter = Cutter { null }
        val error = assertThrows<StatusException> {
            client.withInterceptors(cutter)
                .watchTableResumable("tables/0000nosuchtable00000000", firstBackoff = QUICK_BACKOFF)
                .collect { fail("a message for a table that does not exist: $it") }
        }
        assertEquals(Status.Code.NOT_FOUND, error.status.code)
        assertEquals(1, cutter.opened.size, "attempts")
    }

    @Test
    fun `failures the server or the network caused are retried, the request's are not`() = live {
        val game = newGame("retry table")
        // code, reason, whether another attempt follows; as docs/guide.md's retry table says.
        val cases = listOf(
            Triple(Status.Code.UNAVAILABLE, null, true),
            Triple(Status.Code.UNAVAILABLE, "STREAM_LAGGED", true),
            Triple(Status.Code.DEADLINE_EXCEEDED, null, true),
            Triple(Status.Code.RESOURCE_EXHAUSTED, "OVERLOADED", true),
            Triple(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS", true),
            Triple(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS_FROM_ADDRESS", false),
            Triple(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_TABLES", false),
            Triple(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_REACTIONS", false),
            Triple(Status.Code.RESOURCE_EXHAUSTED, null, false),
            Triple(Status.Code.CANCELLED, null, true),
            Triple(Status.Code.CANCELLED, "CLIENT_CLOSED", false),
            Triple(Status.Code.NOT_FOUND, "TABLE_NOT_FOUND", false),
            Triple(Status.Code.UNAUTHENTICATED, "TOKEN_REVOKED", false),
        )
        val maxReconnects = 2
        val outcomes = cases.map { (code, reason, _) ->
            // Every stream fails before its first message, so the failures come in a row.
            val cutter = Cutter { Cut(status(code, reason)) { sent, _ -> sent == 0 } }
            val error = assertThrows<StatusException> {
                client.withInterceptors(cutter)
                    .watchTableResumable(game.name, seatToken = game.seatToken, maxReconnects = maxReconnects, firstBackoff = QUICK_BACKOFF)
                    .collect { fail("a message got past the cut: $it") }
            }
            assertEquals(code, error.status.code, "$code $reason comes out as it came")
            Triple(code, reason, cutter.opened.size)
        }
        // Retried: opened once, then reopened maxReconnects times, then thrown.
        assertEquals(
            cases.map { (code, reason, retried) -> Triple(code, reason, if (retried) maxReconnects + 1 else 1) },
            outcomes,
            "attempts per failure",
        )
    }

    @Test
    fun `a message between failures starts their count again`() = live {
        val game = newGame("failures reset")
        // Streams 0 to 2 each deliver one message (the snapshot, then the seat's presence) and
        // fail: never two failures in a row, so maxReconnects = 1 is never reached.
        val cutter = Cutter { stream -> if (stream < 3) Cut(unavailable(), deliverFirst = true) { sent, _ -> sent == 0 } else null }
        val watched = Collected(
            this,
            client.withInterceptors(cutter)
                .watchTableResumable(game.name, seatToken = game.seatToken, maxReconnects = 1, firstBackoff = QUICK_BACKOFF),
        )
        try {
            watched.waitFor("the fourth stream's first message") { cutter.opened.size == 4 }
            assertEquals(null, watched.state.value.ended, "the flow is still open (null), not ended")
            val first = watched.state.value.messages.first()
            assertTrue(first.hasSnapshot(), "a snapshot first: $first")
            assertEquals(listOf(null, first.sequence, first.sequence, first.sequence), cutter.opened, "after_sequence asked")
        } finally {
            watched.stop()
        }
    }

    @Test
    fun `deleting the table ends the flow cleanly after table_deleted`() = live {
        val game = newGame("deleted")
        val cutter = Cutter { null }
        val watched = Collected(
            this,
            client.withInterceptors(cutter).watchTableResumable(game.name, seatToken = game.seatToken, firstBackoff = QUICK_BACKOFF),
        )
        try {
            watched.waitFor("the snapshot") { it.hasSnapshot() }
            val (name, creatorToken) = tablesToDelete.removeAt(tablesToDelete.lastIndex)
            client.deleteTable(deleteTableRequest { this.name = name }, bearer(creatorToken))
            withTimeoutOrNull(STREAM_WAIT) { watched.state.first { it.ended != null } } ?: fail("the flow did not end within $STREAM_WAIT")
            val state = watched.state.value
            assertEquals("ok", state.ended, "how the flow ended")
            assertTrue(state.messages.last().event.hasTableDeleted(), "the last message: ${state.messages.last()}")
            assertEquals(1, cutter.opened.size, "attempts")
        } finally {
            watched.stop()
        }
    }

    @Test
    fun `cancelling the collector ends the flow quietly, with no attempt after`() = live {
        val game = newGame("hang up")
        val cutter = Cutter { null }
        val received = mutableListOf<WatchTableResponse>()
        val first = CompletableDeferred<Unit>()
        val ended = CompletableDeferred<Throwable?>()
        val job = launch {
            client.withInterceptors(cutter).watchTableResumable(game.name, seatToken = game.seatToken).collect {
                received += it
                first.complete(Unit)
            }
        }
        job.invokeOnCompletion { ended.complete(it) }
        first.await()
        job.cancel()
        // A StatusException here would also fail this coroutine (the job's parent).
        val cause = withTimeout(STREAM_WAIT) { ended.await() }
        assertTrue(cause is CancellationException, "the job ended with its own cancellation, not $cause")
        assertTrue(received.first().hasSnapshot(), "the first message is a snapshot: ${received.first()}")
        assertEquals(1, cutter.opened.size, "attempts")
    }

    @Test
    fun `a collector that hangs up as the stream fails ends quietly`() = live {
        val game = newGame("hang up as it fails")
        // The snapshot, then at once a failure that is not retried: it reaches grpc-kotlin's
        // buffer while the collector takes the snapshot and cancels itself, so it is thrown
        // without a suspension, where the cancellation would have been seen.
        val cutter = Cutter { Cut(status(Status.Code.NOT_FOUND, "TABLE_NOT_FOUND"), deliverFirst = true) { sent, _ -> sent == 0 } }
        val ended = CompletableDeferred<Throwable?>()
        val job = launch {
            client.withInterceptors(cutter).watchTableResumable(game.name, seatToken = game.seatToken).collect {
                this@launch.cancel()
            }
        }
        job.invokeOnCompletion { ended.complete(it) }
        // A StatusException here would also fail this coroutine (the job's parent).
        val cause = withTimeout(STREAM_WAIT) { ended.await() }
        assertTrue(cause is CancellationException, "the job ended with its own cancellation, not $cause")
        assertEquals(1, cutter.opened.size, "attempts")
    }

    @Test
    fun `cancelling while waiting to reconnect ends the flow at once`() = live {
        val game = newGame("hang up in backoff")
        // One message, then a failure; the next attempt would come 5 to 10 s later.
        val cutter = Cutter { stream -> if (stream == 0) Cut(unavailable()) { sent, _ -> sent == 1 } else null }
        val first = CompletableDeferred<Unit>()
        val job = launch {
            client.withInterceptors(cutter)
                .watchTableResumable(game.name, seatToken = game.seatToken, firstBackoff = 10.seconds)
                .collect { first.complete(Unit) }
        }
        first.await()
        withTimeoutOrNull(STREAM_WAIT) { while (cutter.cuts.get() == 0) delay(10.milliseconds) }
            ?: fail("the stream was not cut within $STREAM_WAIT of its first message")
        val failedAt = TimeSource.Monotonic.markNow()
        delay(300.milliseconds) // into the wait
        job.cancel()
        job.join()
        val took = failedAt.elapsedNow()
        assertTrue(took < 3.seconds, "the flow ended $took after the failure, want at the cancel, 300 ms in")
        assertEquals(1, cutter.opened.size, "attempts")
    }

    @Test
    fun `an exception of the collector is thrown as it is and does not reopen the stream`() = live {
        val game = newGame("collector fails")
        val cutter = Cutter { null }
        // A StatusException the stream would retry, had it come from the stream.
        val own = Status.UNAVAILABLE.withDescription("a call in the collector failed (test)").asException()
        val thrown = assertThrows<StatusException> {
            client.withInterceptors(cutter)
                .watchTableResumable(game.name, seatToken = game.seatToken, firstBackoff = QUICK_BACKOFF)
                .collect { throw own }
        }
        assertSame(own, thrown)
        assertEquals(1, cutter.opened.size, "attempts")
    }

    @Test
    fun `a deadline on the stub does not reach the stream`() = live {
        val game = newGame("deadline")
        val cutter = Cutter { null }
        val watched = Collected(
            this,
            client.withInterceptors(cutter).withDeadlineAfter(500, TimeUnit.MILLISECONDS)
                .watchTableResumable(game.name, seatToken = game.seatToken, maxReconnects = 0),
        )
        try {
            watched.waitFor("the snapshot") { it.hasSnapshot() }
            delay(1500.milliseconds) // past the deadline, on a table where nothing happens
            val state = watched.state.value
            assertEquals(null, state.ended, "the stream is still open (null), not ended")
            assertEquals(1, cutter.opened.size, "attempts")
        } finally {
            watched.stop()
        }
    }

    // ------------------------------------------------------------------------------- helpers

    /** Runs a test body against the live server within [TEST_TIMEOUT]. */
    private fun live(body: suspend CoroutineScope.() -> Unit) = runBlocking { withTimeout(TEST_TIMEOUT) { body() } }

    /** A table with three heuristic bots and the seat the test joined, and how that seat moves. */
    private inner class Game(val name: String, val seatToken: String, val view: TableView) {
        /** The seat's next move, the first its view offers; the view after it. */
        suspend fun move(view: TableView): TableView {
            val headers = bearer(seatToken)
            return when {
                view.cardsToPass > 0 -> client.passCards(
                    passCardsRequest { name = this@Game.name; cards += view.legalCardsList.take(view.cardsToPass) },
                    headers,
                ).view
                view.legalCardsCount > 0 -> client.playCard(
                    playCardRequest { name = this@Game.name; card = view.legalCardsList.first() },
                    headers,
                ).view
                else -> fail("the seat owes no move (inline bots have moved): phase ${view.table.phase}")
            }
        }
    }

    private suspend fun newGame(label: String): Game {
        val created = client.createTableWithThreeBots("kotlin resumable watch: $label")
        val name = created.view.table.name
        tablesToDelete += name to created.creatorToken
        val joined = client.joinTable(joinTableRequest { this.name = name; seat = 0; playerDisplayName = "kotlin resumable" })
        return Game(name, joined.seatToken, joined.view)
    }
}

/**
 * Ends a watch stream with [status] and [trailers] at the message for which [at] holds (given how
 * many were let through before it): before it, or just after it when [deliverFirst]. With
 * [rewind], the server is asked for the events after `after_sequence - rewind` instead, as if it
 * sent some again that the stream had delivered.
 */
private class Cut(
    val status: Status,
    val trailers: Metadata = Metadata(),
    val deliverFirst: Boolean = false,
    val rewind: Long = 0,
    val at: (sent: Int, message: WatchTableResponse) -> Boolean,
) {
    constructor(
        failure: Pair<Status, Metadata>,
        deliverFirst: Boolean = false,
        rewind: Long = 0,
        at: (sent: Int, message: WatchTableResponse) -> Boolean,
    ) : this(failure.first, failure.second, deliverFirst, rewind, at)
}

private fun unavailable(): Pair<Status, Metadata> =
    Status.UNAVAILABLE.withDescription("the connection dropped (test)") to Metadata()

/** A failure as the server sends it: the code, and the reason in a `google.rpc.ErrorInfo`. */
private fun status(code: Status.Code, reason: String?): Pair<Status, Metadata> {
    if (reason == null) return code.toStatus().withDescription("(test)") to Metadata()
    val error = StatusProto.toStatusException(
        com.google.rpc.Status.newBuilder()
            .setCode(code.value())
            .setMessage("(test)")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason(reason).setDomain("hearts.v1").build()))
            .build(),
    )
    return error.status to (error.trailers ?: Metadata())
}

private val AUTHORIZATION: Metadata.Key<String> = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)

/**
 * Ends the WatchTable streams for which [plan] (given the stream's index, from 0) names a [Cut]:
 * the real call is cancelled and the caller sees the cut's status instead, as when a connection
 * drops. A stream the plan names no cut for passes through untouched. Counts the [cuts] made. Records each stream's `after_sequence` (null: unset) and `authorization` header.
 */
private class Cutter(private val plan: (stream: Int) -> Cut?) : ClientInterceptor {
    val opened = CopyOnWriteArrayList<Long?>()
    val authorizations = CopyOnWriteArrayList<String?>()
    val cuts = AtomicInteger()

    override fun <ReqT, RespT> interceptCall(
        method: MethodDescriptor<ReqT, RespT>,
        callOptions: CallOptions,
        next: Channel,
    ): ClientCall<ReqT, RespT> {
        val call = next.newCall(method, callOptions)
        if (method.fullMethodName != TableServiceGrpc.getWatchTableMethod().fullMethodName) return call
        return object : ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT>(call) {
            @Volatile
            private var cut: Cut? = null

            // The caller goes on sending (grpc-kotlin half-closes after the request) while the
            // stream is being cut, and grpc-java refuses that on a call cancelled by its caller;
            // after a cut, what the caller sends goes nowhere, as on a dropped connection.
            private val lock = Any()
            private var isCut = false

            fun cutNow() = synchronized(lock) {
                isCut = true
                cuts.incrementAndGet()
                call.cancel("cut by the test", null)
            }

            override fun request(numMessages: Int) = synchronized(lock) { if (!isCut) super.request(numMessages) }

            override fun halfClose() = synchronized(lock) { if (!isCut) super.halfClose() }

            override fun start(listener: Listener<RespT>, headers: Metadata) {
                authorizations += headers.get(AUTHORIZATION)
                // The callbacks of one call come one at a time, so these need no lock.
                var sent = 0
                var closed = false
                val cutting = object : ForwardingClientCallListener.SimpleForwardingClientCallListener<RespT>(listener) {
                    override fun onMessage(message: RespT) {
                        if (closed) return
                        val cut = cut
                        if (cut != null && cut.at(sent, message as WatchTableResponse)) {
                            closed = true
                            cutNow()
                            if (cut.deliverFirst) super.onMessage(message)
                            super.onClose(cut.status, cut.trailers)
                            return
                        }
                        sent += 1
                        super.onMessage(message)
                    }

                    override fun onClose(status: Status, trailers: Metadata) {
                        if (!closed) super.onClose(status, trailers)
                    }

                    override fun onReady() {
                        if (!closed) super.onReady()
                    }
                }
                super.start(cutting, headers)
            }

            override fun sendMessage(message: ReqT) {
                synchronized(lock) {
                    if (isCut) return
                    val request = message as WatchTableRequest
                    val cut = plan(opened.size)
                    this.cut = cut
                    opened += if (request.hasAfterSequence()) request.afterSequence else null
                    if (cut != null && cut.rewind > 0 && request.hasAfterSequence()) {
                        @Suppress("UNCHECKED_CAST") // ReqT is WatchTableRequest, as the cast above found
                        super.sendMessage(request.toBuilder().setAfterSequence(request.afterSequence - cut.rewind).build() as ReqT)
                    } else {
                        super.sendMessage(message)
                    }
                }
            }
        }
    }
}

/** A watch flow collected in the background: what it delivered, and how it ended. */
private class Collected(scope: CoroutineScope, flow: Flow<WatchTableResponse>) {
    class State(
        val messages: List<WatchTableResponse> = emptyList(),
        /** Null while open; the error, or "ok" for a clean end. */
        val ended: String? = null,
    )

    val state = MutableStateFlow(State())

    private val job = scope.launch {
        try {
            flow.collect { message -> state.update { State(it.messages + message) } }
            state.update { State(it.messages, "ok") }
        } catch (e: StatusException) {
            state.update { State(it.messages, "${e.status}") }
        }
    }

    /** Waits until a message satisfies [want]. */
    suspend fun waitFor(what: String, want: (WatchTableResponse) -> Boolean) {
        val seen = withTimeoutOrNull(STREAM_WAIT) { state.first { s -> s.ended != null || s.messages.any(want) } }
            ?: fail("$what did not arrive within $STREAM_WAIT")
        if (seen.messages.none(want)) fail("the stream ended (${seen.ended}) before $what")
    }

    /** The stored sequences delivered (snapshots and stored events), once one reaches [last]. */
    suspend fun storedUntil(last: Long): List<Long> {
        waitFor("sequence $last") { stored(it) && it.sequence >= last }
        return state.value.messages.filter(::stored).map { it.sequence }.takeWhile { it <= last }
    }

    suspend fun stop() = withContext(NonCancellable) {
        job.cancel()
        job.join()
    }

    private fun stored(message: WatchTableResponse): Boolean =
        message.hasSnapshot() || (message.hasEvent() && !message.event.hasReaction() && !message.event.hasPresenceChanged())
}
