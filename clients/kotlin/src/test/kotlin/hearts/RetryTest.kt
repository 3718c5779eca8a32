/*
 * retrying against a real gRPC server in this JVM (grpc-java's in-process transport) that answers
 * each call as its script says: a status with a google.rpc.ErrorInfo in its details, as the Hearts
 * server sends them, a call that never answers, or an answer. The server records every request
 * and its authorization header, and when it came, so that the tests see each attempt as sent.
 * Needs no Hearts server.
 */
package hearts

import com.google.protobuf.Any
import com.google.protobuf.Message
import com.google.rpc.ErrorInfo
import hearts.v1.CreateTableRequest
import hearts.v1.CreateTableResponse
import hearts.v1.DeleteTableRequest
import hearts.v1.DeleteTableResponse
import hearts.v1.GetTableRequest
import hearts.v1.GetTableResponse
import hearts.v1.JoinTableRequest
import hearts.v1.JoinTableResponse
import hearts.v1.LeaveTableRequest
import hearts.v1.LeaveTableResponse
import hearts.v1.ListPlayerTablesRequest
import hearts.v1.ListPlayerTablesResponse
import hearts.v1.ListTablesRequest
import hearts.v1.ListTablesResponse
import hearts.v1.PassCardsRequest
import hearts.v1.PassCardsResponse
import hearts.v1.PlayCardRequest
import hearts.v1.PlayCardResponse
import hearts.v1.QuickJoinRequest
import hearts.v1.QuickJoinResponse
import hearts.v1.RematchTableRequest
import hearts.v1.RematchTableResponse
import hearts.v1.SendReactionRequest
import hearts.v1.SendReactionResponse
import hearts.v1.SuggestMoveRequest
import hearts.v1.SuggestMoveResponse
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineImplBase
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.createTableRequest
import hearts.v1.getTableRequest
import hearts.v1.playCardRequest
import hearts.v1.sendReactionRequest
import hearts.v1.watchTableRequest
import io.grpc.ManagedChannel
import io.grpc.Metadata
import io.grpc.Server
import io.grpc.ServerCall
import io.grpc.ServerCallHandler
import io.grpc.ServerInterceptor
import io.grpc.ServerInterceptors
import io.grpc.Status
import io.grpc.StatusException
import io.grpc.inprocess.InProcessChannelBuilder
import io.grpc.inprocess.InProcessServerBuilder
import io.grpc.protobuf.StatusProto
import io.grpc.stub.MetadataUtils
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import kotlin.math.pow
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Bounds each test. */
private val TEST_TIMEOUT = 30.seconds

/** Short waits, so that the tests do not sit out the default backoff. */
private val QUICK = RetryOptions(firstBackoff = 1.milliseconds)

class RetryTest {
    private val script = Script()
    private lateinit var server: Server
    private lateinit var channel: ManagedChannel
    private lateinit var client: TableServiceCoroutineStub

    @BeforeEach
    fun start() {
        val name = "retry-test-${UUID.randomUUID()}"
        server = InProcessServerBuilder.forName(name)
            .addService(ServerInterceptors.intercept(script.bindService(), script.headers))
            .build()
            .start()
        channel = InProcessChannelBuilder.forName(name).build()
        client = TableServiceCoroutineStub(channel)
    }

    @AfterEach
    fun stop() {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
    }

    @Test
    fun `failures that may pass are retried by what the call does, the rest reach the app unchanged`() = test {
        // code, reason, then whether a read, a mutation with a request_id, a reaction is tried again.
        val cases = listOf(
            Case(Status.Code.UNAVAILABLE, null, read = true, mutation = true, reaction = false),
            Case(Status.Code.UNAVAILABLE, "STORE_UNAVAILABLE", read = true, mutation = true, reaction = false),
            Case(Status.Code.DEADLINE_EXCEEDED, null, read = true, mutation = true, reaction = false),
            Case(Status.Code.RESOURCE_EXHAUSTED, "OVERLOADED", read = true, mutation = true, reaction = true),
            Case(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_REACTIONS", read = false, mutation = false, reaction = false),
            Case(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_TABLES", read = false, mutation = false, reaction = false),
            Case(Status.Code.RESOURCE_EXHAUSTED, null, read = false, mutation = false, reaction = false),
            Case(Status.Code.CANCELLED, null, read = true, mutation = true, reaction = true),
            Case(Status.Code.ABORTED, "CONFLICT", read = false, mutation = true, reaction = false),
            Case(Status.Code.ABORTED, "ETAG_MISMATCH", read = false, mutation = false, reaction = false),
            Case(Status.Code.INVALID_ARGUMENT, "INVALID_CARD", read = false, mutation = false, reaction = false),
            Case(Status.Code.FAILED_PRECONDITION, "NOT_YOUR_TURN", read = false, mutation = false, reaction = false),
            Case(Status.Code.NOT_FOUND, "TABLE_NOT_FOUND", read = false, mutation = false, reaction = false),
            Case(Status.Code.UNAUTHENTICATED, "TOKEN_INVALID", read = false, mutation = false, reaction = false),
            Case(Status.Code.INTERNAL, "INTERNAL", read = false, mutation = false, reaction = false),
        )
        val maxRetries = 2
        val calls: List<Pair<String, suspend TableServiceCoroutineStub.() -> kotlin.Any>> = listOf(
            "read" to { retrying(getTableRequest { name = "tables/t" }, QUICK.copy(maxRetries = maxRetries)) { getTable(it) } },
            "mutation" to { retrying(playCardRequest { name = "tables/t" }, QUICK.copy(maxRetries = maxRetries)) { playCard(it) } },
            "reaction" to { retrying(sendReactionRequest { name = "tables/t" }, QUICK.copy(maxRetries = maxRetries)) { sendReaction(it) } },
        )
        for (case in cases) {
            for ((index, call) in calls.withIndex()) {
                val (what, body) = call
                script.reset(List(maxRetries + 2) { attempt -> Outcome.Fail(case.code, case.reason, "attempt ${attempt + 1}") })
                val error = assertThrows<StatusException> { client.body() }
                val retried = listOf(case.read, case.mutation, case.reaction)[index]
                val attempts = if (retried) maxRetries + 1 else 1
                val label = "${case.code} ${case.reason} for a $what"
                assertEquals(attempts, script.requests.size, "attempts after $label")
                // The last attempt's status, details and all, as the server sent it.
                assertEquals(case.code, error.status.code, label)
                assertEquals("attempt $attempts", error.status.description, label)
                assertEquals(case.reason, errorReason(error), label)
            }
        }
    }

    @Test
    fun `every unary call is classed by its request`() = test {
        val reads = setOf("GetTable", "ListTables", "ListPlayerTables", "SuggestMove")
        val mutations = setOf("CreateTable", "DeleteTable", "JoinTable", "LeaveTable", "PassCards", "PlayCard", "RematchTable", "QuickJoin")
        val options = QUICK.copy(maxRetries = 1)
        val calls: Map<String, suspend TableServiceCoroutineStub.() -> kotlin.Any> = mapOf(
            "GetTable" to { retrying(GetTableRequest.getDefaultInstance(), options) { getTable(it) } },
            "ListTables" to { retrying(ListTablesRequest.getDefaultInstance(), options) { listTables(it) } },
            "ListPlayerTables" to { retrying(ListPlayerTablesRequest.getDefaultInstance(), options) { listPlayerTables(it) } },
            "SuggestMove" to { retrying(SuggestMoveRequest.getDefaultInstance(), options) { suggestMove(it) } },
            "CreateTable" to { retrying(CreateTableRequest.getDefaultInstance(), options) { createTable(it) } },
            "DeleteTable" to { retrying(DeleteTableRequest.getDefaultInstance(), options) { deleteTable(it) } },
            "JoinTable" to { retrying(JoinTableRequest.getDefaultInstance(), options) { joinTable(it) } },
            "LeaveTable" to { retrying(LeaveTableRequest.getDefaultInstance(), options) { leaveTable(it) } },
            "PassCards" to { retrying(PassCardsRequest.getDefaultInstance(), options) { passCards(it) } },
            "PlayCard" to { retrying(PlayCardRequest.getDefaultInstance(), options) { playCard(it) } },
            "RematchTable" to { retrying(RematchTableRequest.getDefaultInstance(), options) { rematchTable(it) } },
            "QuickJoin" to { retrying(QuickJoinRequest.getDefaultInstance(), options) { quickJoin(it) } },
            "SendReaction" to { retrying(SendReactionRequest.getDefaultInstance(), options) { sendReaction(it) } },
        )
        for ((method, call) in calls) {
            // A lost answer: tried again unless the call may have acted without a request_id.
            script.reset(listOf(Outcome.Fail(Status.Code.UNAVAILABLE, null)))
            runCatching { client.call() }
            assertEquals(if (method == "SendReaction") 1 else 2, script.requests.size, "$method after UNAVAILABLE")
            if (method == "SendReaction") continue

            // Too contended to commit: tried again only with a request_id, which every mutation
            // has by now, the same on both attempts.
            script.reset(listOf(Outcome.Fail(Status.Code.ABORTED, "CONFLICT")))
            val refused = runCatching { client.call() }.exceptionOrNull()
            if (method in mutations) {
                assertEquals(null, refused, "$method after CONFLICT")
                val ids = script.requests.map(::requestIdOf)
                assertEquals(2, ids.size, "$method attempts after CONFLICT")
                assertEquals(1, ids.toSet().size, "$method sends one request_id: $ids")
                UUID.fromString(ids[0]) // a UUID
            } else {
                assertTrue(method in reads, method)
                assertEquals(Status.Code.ABORTED, (refused as StatusException).status.code, method)
                assertEquals(1, script.requests.size, "$method after CONFLICT")
            }
        }
    }

    @Test
    fun `an empty request_id is filled once and sent on every attempt, the caller's request untouched`() = test {
        script.reset(List(2) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        val request = playCardRequest { name = "tables/t"; card = parseCard("QS") }
        client.retrying(request, QUICK) { playCard(it) }
        assertEquals("", request.requestId, "the caller's request is not changed")
        val sent = script.requests.map { it as PlayCardRequest }
        assertEquals(3, sent.size)
        assertEquals(1, sent.toSet().size, "every attempt sends the same request: $sent")
        assertEquals(request, sent[0].toBuilder().clearRequestId().build(), "the copy differs only in its request_id")
        assertEquals(4, UUID.fromString(sent[0].requestId).version(), "a random (v4) UUID")

        // A second call is a new call: a new id.
        script.reset(emptyList())
        client.retrying(request, QUICK) { playCard(it) }
        assertNotEquals(sent[0].requestId, (script.requests.single() as PlayCardRequest).requestId)
    }

    @Test
    fun `a request_id the caller set is kept`() = test {
        script.reset(List(2) { Outcome.Fail(Status.Code.ABORTED, "CONFLICT") })
        val request = createTableRequest { requestId = "the app's own" }
        client.retrying(request, QUICK) { createTable(it) }
        assertEquals(List(3) { "the app's own" }, script.requests.map(::requestIdOf))
    }

    @Test
    fun `every attempt carries the same metadata`() = test {
        script.reset(List(2) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        client.retrying(getTableRequest { name = "tables/t" }, QUICK) { getTable(it, bearer("per-call")) }
        assertEquals(List(3) { "Bearer per-call" }, script.authorizations)

        script.reset(List(2) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        client.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(bearer("stub")))
            .retrying(playCardRequest { name = "tables/t" }, QUICK) { playCard(it) }
        assertEquals(List(3) { "Bearer stub" }, script.authorizations)
    }

    @Test
    fun `the answer comes back after failures that passed`() = test {
        script.reset(listOf(Outcome.Fail(Status.Code.UNAVAILABLE, null), Outcome.Fail(Status.Code.CANCELLED, null)))
        val answer = client.retrying(getTableRequest { name = "tables/t" }, QUICK) { getTable(it) }
        assertEquals(GetTableResponse.getDefaultInstance(), answer)
        assertEquals(3, script.requests.size)
    }

    @Test
    fun `maxRetries bounds the attempts, 0 tries once, the default 4 times`() = test {
        for (maxRetries in listOf(0, 1, 5)) {
            script.reset(List(10) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
            assertThrows<StatusException> { client.retrying(getTableRequest {}, QUICK.copy(maxRetries = maxRetries)) { getTable(it) } }
            assertEquals(maxRetries + 1, script.requests.size, "maxRetries $maxRetries")
        }
        // The defaults: 3 retries, after 0.1-0.2 s, 0.2-0.4 s and 0.4-0.8 s.
        script.reset(List(10) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        assertThrows<StatusException> { client.retrying(getTableRequest {}) { getTable(it) } }
        assertEquals(4, script.requests.size, "attempts with the defaults")
        val waits = script.waits()
        for ((i, wait) in waits.withIndex()) {
            val full = 200.milliseconds * (1 shl i)
            assertTrue(wait >= full / 2, "wait ${i + 1} is $wait, at least ${full / 2}")
            assertTrue(wait < full + 300.milliseconds, "wait ${i + 1} is $wait, under $full and some")
        }
    }

    @Test
    fun `the wait doubles from firstBackoff up to its cap, each shortened at random by up to half`() {
        for (failures in 1..40) {
            val full = minOf(5.seconds, 200.milliseconds * 2.0.pow(failures - 1))
            val waits = List(200) { backoff(200.milliseconds, failures, 5.seconds) }
            assertTrue(waits.all { it >= full / 2 && it < full }, "failure $failures: $full, halved at most: ${waits.min()} to ${waits.max()}")
            // Random, not fixed: spread over most of the range.
            assertTrue(waits.max() - waits.min() > full / 4, "failure $failures: ${waits.min()} to ${waits.max()}")
        }
        assertEquals(Duration.ZERO, backoff(Duration.ZERO, 3, 5.seconds))
    }

    @Test
    fun `cancelling the coroutine while it waits to try again ends it at once`() = test {
        script.reset(List(10) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        val job = launch { client.retrying(getTableRequest {}, RetryOptions(firstBackoff = 20.seconds)) { getTable(it) } }
        script.awaitRequests(1)
        val cancelledAt = TimeSource.Monotonic.markNow()
        job.cancel()
        job.join()
        assertTrue(cancelledAt.elapsedNow() < 1.seconds, "ended ${cancelledAt.elapsedNow()} after the cancel")
        assertTrue(job.isCancelled)
        delay(100.milliseconds)
        assertEquals(1, script.requests.size, "no attempt after the cancel")
    }

    @Test
    fun `cancelling the coroutine during a call ends it at once, without another attempt`() = test {
        script.reset(listOf(Outcome.Hang))
        val job = launch { client.retrying(getTableRequest {}, QUICK) { getTable(it) } }
        script.awaitRequests(1)
        val cancelledAt = TimeSource.Monotonic.markNow()
        job.cancel()
        job.join()
        assertTrue(cancelledAt.elapsedNow() < 1.seconds, "ended ${cancelledAt.elapsedNow()} after the cancel")
        assertTrue(job.isCancelled)
        delay(100.milliseconds)
        assertEquals(1, script.requests.size, "no attempt after the cancel")
    }

    @Test
    fun `an attempt that runs out of attemptTimeout is tried again, unless it may have acted`() = test {
        script.reset(listOf(Outcome.Hang))
        val options = QUICK.copy(attemptTimeout = 200.milliseconds)
        client.retrying(playCardRequest {}, options) { playCard(it) }
        assertEquals(2, script.requests.size)

        script.reset(listOf(Outcome.Hang))
        val error = assertThrows<StatusException> { client.retrying(sendReactionRequest {}, options) { sendReaction(it) } }
        assertEquals(Status.Code.DEADLINE_EXCEEDED, error.status.code)
        assertEquals(1, script.requests.size)
    }

    @Test
    fun `the stub's deadline bounds every attempt and every wait`() = test {
        // A wait that would pass the deadline is not begun: the last error comes at once.
        script.reset(List(10) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        var started = TimeSource.Monotonic.markNow()
        var error = assertThrows<StatusException> {
            client.withDeadlineAfter(2, TimeUnit.SECONDS).retrying(getTableRequest {}, RetryOptions(firstBackoff = 10.seconds)) { getTable(it) }
        }
        assertEquals(Status.Code.UNAVAILABLE, error.status.code)
        assertEquals(1, script.requests.size)
        assertTrue(started.elapsedNow() < 1.seconds, "returned after ${started.elapsedNow()}")

        // Many short waits: they stop at the deadline.
        script.reset(List(1000) { Outcome.Fail(Status.Code.UNAVAILABLE, null) })
        started = TimeSource.Monotonic.markNow()
        error = assertThrows<StatusException> {
            client.withDeadlineAfter(1, TimeUnit.SECONDS).retrying(getTableRequest {}, RetryOptions(maxRetries = 1000, firstBackoff = 20.milliseconds)) { getTable(it) }
        }
        assertTrue(error.status.code in setOf(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED), "${error.status}")
        assertTrue(started.elapsedNow() < 1.5.seconds, "returned after ${started.elapsedNow()}")
        assertTrue(script.requests.size in 3..100, "${script.requests.size} attempts in a second")

        // An attempt's own timeout never outlasts the stub's deadline.
        script.reset(List(10) { Outcome.Hang })
        started = TimeSource.Monotonic.markNow()
        error = assertThrows<StatusException> {
            client.withDeadlineAfter(300, TimeUnit.MILLISECONDS)
                .retrying(getTableRequest {}, QUICK.copy(attemptTimeout = 10.seconds)) { getTable(it) }
        }
        assertEquals(Status.Code.DEADLINE_EXCEEDED, error.status.code)
        assertEquals(1, script.requests.size)
        assertTrue(started.elapsedNow() < 2.seconds, "returned after ${started.elapsedNow()}")
    }

    @Test
    fun `a watch and bad options are refused`() = test {
        assertThrows<IllegalArgumentException> { client.retrying(watchTableRequest { name = "tables/t" }) { getTable(getTableRequest {}) } }
        assertThrows<IllegalArgumentException> { RetryOptions(maxRetries = -1) }
        assertThrows<IllegalArgumentException> { RetryOptions(firstBackoff = (-1).milliseconds) }
        assertThrows<IllegalArgumentException> { RetryOptions(attemptTimeout = Duration.ZERO) }
        assertEquals(RetryOptions(3, 200.milliseconds, null), RetryOptions(), "the defaults")
    }

    private fun test(body: suspend CoroutineScope.() -> Unit) = runBlocking { withTimeout(TEST_TIMEOUT) { body() } }
}

private class Case(val code: Status.Code, val reason: String?, val read: Boolean, val mutation: Boolean, val reaction: Boolean)

/** What the scripted server does with one call. */
private sealed interface Outcome {
    /** Fails the call with [code] and, when given, an ErrorInfo with [reason] (domain hearts.v1). */
    class Fail(val code: Status.Code, val reason: String?, val message: String = "(test)") : Outcome {
        fun error(): StatusException {
            val status = com.google.rpc.Status.newBuilder().setCode(code.value()).setMessage(message)
            reason?.let { status.addDetails(Any.pack(ErrorInfo.newBuilder().setReason(it).setDomain("hearts.v1").build())) }
            return StatusProto.toStatusException(status.build())
        }
    }

    /** Never answers: the call waits until the client gives up on it. */
    data object Hang : Outcome
}

private val AUTHORIZATION: Metadata.Key<String> = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)

private fun requestIdOf(request: Message): String =
    request.getField(request.descriptorForType.findFieldByName("request_id")) as String

/**
 * Every unary method of TableService, each answering by the next [Outcome] of the script, and with
 * an empty answer once the script has run out.
 */
private class Script : TableServiceCoroutineImplBase() {
    private var outcomes = ArrayDeque<Outcome>()
    val requests = CopyOnWriteArrayList<Message>()
    val authorizations = CopyOnWriteArrayList<String?>()
    private val arrivals = CopyOnWriteArrayList<TimeSource.Monotonic.ValueTimeMark>()

    /** Records the authorization header of each call. */
    val headers = object : ServerInterceptor {
        override fun <ReqT, RespT> interceptCall(
            call: ServerCall<ReqT, RespT>,
            headers: Metadata,
            next: ServerCallHandler<ReqT, RespT>,
        ): ServerCall.Listener<ReqT> {
            authorizations += headers.get(AUTHORIZATION)
            return next.startCall(call, headers)
        }
    }

    /** A new script, and nothing recorded yet. */
    fun reset(script: List<Outcome>) = synchronized(this) {
        outcomes = ArrayDeque(script)
        requests.clear()
        authorizations.clear()
        arrivals.clear()
    }

    /** The time between each attempt's arrival and the next's. */
    fun waits(): List<Duration> = arrivals.zipWithNext { a, b -> (b - a) }

    suspend fun awaitRequests(count: Int) {
        while (requests.size < count) delay(5.milliseconds)
    }

    private suspend fun <T> answer(request: Message, answer: T): T {
        val outcome = synchronized(this) {
            arrivals += TimeSource.Monotonic.markNow()
            requests += request
            outcomes.removeFirstOrNull()
        }
        when (outcome) {
            null -> return answer
            is Outcome.Fail -> throw outcome.error()
            Outcome.Hang -> awaitCancellation()
        }
    }

    override suspend fun getTable(request: GetTableRequest) = answer(request, GetTableResponse.getDefaultInstance())
    override suspend fun listTables(request: ListTablesRequest) = answer(request, ListTablesResponse.getDefaultInstance())
    override suspend fun listPlayerTables(request: ListPlayerTablesRequest) = answer(request, ListPlayerTablesResponse.getDefaultInstance())
    override suspend fun suggestMove(request: SuggestMoveRequest) = answer(request, SuggestMoveResponse.getDefaultInstance())
    override suspend fun createTable(request: CreateTableRequest) = answer(request, CreateTableResponse.getDefaultInstance())
    override suspend fun deleteTable(request: DeleteTableRequest) = answer(request, DeleteTableResponse.getDefaultInstance())
    override suspend fun joinTable(request: JoinTableRequest) = answer(request, JoinTableResponse.getDefaultInstance())
    override suspend fun leaveTable(request: LeaveTableRequest) = answer(request, LeaveTableResponse.getDefaultInstance())
    override suspend fun passCards(request: PassCardsRequest) = answer(request, PassCardsResponse.getDefaultInstance())
    override suspend fun playCard(request: PlayCardRequest) = answer(request, PlayCardResponse.getDefaultInstance())
    override suspend fun rematchTable(request: RematchTableRequest) = answer(request, RematchTableResponse.getDefaultInstance())
    override suspend fun quickJoin(request: QuickJoinRequest) = answer(request, QuickJoinResponse.getDefaultInstance())
    override suspend fun sendReaction(request: SendReactionRequest) = answer(request, SendReactionResponse.getDefaultInstance())
}
