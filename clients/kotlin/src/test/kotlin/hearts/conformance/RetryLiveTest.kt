/*
 * retrying against a live server at HEARTS_SERVER (skipped without one; scripts/with-server.sh
 * starts one and sets it), through a [Relay] on loopback that loses the answer of a call after the
 * server ran it and closes the connection, as a phone's network does when it changes hands at the
 * wrong moment.
 *
 * A PlayCard whose answer is lost is tried again with the request_id the helper gave it, and the
 * server answers the retry from its memory: the card is played once. A SendReaction, which has no
 * request_id, is not tried again by the helper. And grpc-java itself sends a call again when its
 * connection closes before any answer came (its "transparent retry", on by default), so without
 * `disableRetry()` on the channel a reaction lost that way is shown twice: the last test pins
 * that down, for the README's warning.
 */
package hearts.conformance

import hearts.RetryOptions
import hearts.bearer
import hearts.retrying
import hearts.v1.PlayCardRequest
import hearts.v1.Reaction
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.TableView
import hearts.v1.deleteTableRequest
import hearts.v1.getTableRequest
import hearts.v1.joinTableRequest
import hearts.v1.passCardsRequest
import hearts.v1.playCardRequest
import hearts.v1.sendReactionRequest
import hearts.v1.watchTableRequest
import io.grpc.CallOptions
import io.grpc.Channel
import io.grpc.ClientCall
import io.grpc.ClientInterceptor
import io.grpc.ForwardingClientCall
import io.grpc.InsecureChannelCredentials
import io.grpc.ManagedChannel
import io.grpc.MethodDescriptor
import io.grpc.Status
import io.grpc.StatusException
import io.grpc.okhttp.OkHttpChannelBuilder
import io.grpc.stub.MetadataUtils
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/** Bounds each test. */
private val TEST_TIMEOUT = 60.seconds

/** How long to wait for a reaction that should not come. */
private val QUIET = 1.seconds

class RetryLiveTest {
    private lateinit var direct: ManagedChannel
    private lateinit var client: TableServiceCoroutineStub
    private lateinit var relay: Relay
    private val channels = mutableListOf<ManagedChannel>()
    private val tablesToDelete = mutableListOf<Pair<String, String>>() // name to creator token

    @BeforeEach
    fun connect() {
        val address = System.getenv("HEARTS_SERVER")
        assumeTrue(!address.isNullOrEmpty(), "HEARTS_SERVER is unset; run under scripts/with-server.sh")
        direct = readmeChannel(address)
        client = TableServiceCoroutineStub(direct)
        relay = Relay(InetSocketAddress(address.substringBeforeLast(':'), address.substringAfterLast(':').toInt()))
    }

    @AfterEach
    fun disconnect() {
        if (!::direct.isInitialized) return
        relay.close()
        for (channel in channels) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
        runBlocking {
            for ((name, creatorToken) in tablesToDelete) {
                client.deleteTable(deleteTableRequest { this.name = name }, bearer(creatorToken))
            }
        }
        direct.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
    }

    @Test
    fun `a PlayCard whose answer is lost is played once, and its retry gets the first answer`() = live {
        val game = seatedAtItsTurn("lost answer")
        val card = game.view.legalCardsList.first()
        val sent = CopyOnWriteArrayList<PlayCardRequest>()
        // grpc-java's own resend is off, so that the loss reaches the helper.
        val seat = TableServiceCoroutineStub(throughRelay(transparentRetry = false))
            .withInterceptors(Recorder(sent), MetadataUtils.newAttachHeadersInterceptor(bearer(game.seatToken)))

        relay.loseNextAnswer()
        val request = playCardRequest { name = game.name; this.card = card }
        val answer = seat.retrying(request, RetryOptions(firstBackoff = 50.milliseconds)) { playCard(it) }

        assertEquals(2, sent.size, "attempts: the first lost its answer")
        assertEquals(2, relay.callsStarted, "calls that reached the server")
        assertEquals(sent[0], sent[1], "both attempts sent the same request")
        assertEquals(request, sent[0].toBuilder().clearRequestId().build(), "with a request_id added")
        assertEquals("", request.requestId, "the caller's request is unchanged")

        // One card gone from the hand, and the answer is the first call's, which the server keeps.
        val now = client.getTable(getTableRequest { name = game.name }, bearer(game.seatToken)).view
        assertEquals(game.view.handCount - 1, now.handCount, "one card played: hand before ${game.view.handList}, now ${now.handList}")
        assertFalse(card in now.handList, "the card left the hand")
        assertEquals(game.view.handCount - 1, answer.view.handCount, "the answer's hand")
        assertEquals(answer, client.playCard(sent[0], bearer(game.seatToken)), "the server's answer to that request_id")
    }

    @Test
    fun `a SendReaction whose answer is lost is not sent again by the helper`() = live {
        val game = seatedAtItsTurn("lost reaction")
        val seat = TableServiceCoroutineStub(throughRelay(transparentRetry = false))
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(bearer(game.seatToken)))
        val reactions = watchReactions(game)
        try {
            relay.loseNextAnswer()
            val error = assertThrows<StatusException> {
                seat.retrying(sendReactionRequest { name = game.name; reaction = Reaction.REACTION_CLAP }, RetryOptions(firstBackoff = 50.milliseconds)) {
                    sendReaction(it)
                }
            }
            assertEquals(Status.Code.UNAVAILABLE, error.status.code, "$error")
            assertEquals(1, relay.callsStarted, "calls that reached the server")
            assertEquals(1, reactions.awaitAtLeast(1), "the reaction was shown once")
        } finally {
            reactions.stop()
        }
    }

    @Test
    fun `grpc-java sends a call again by itself when its connection closes before the answer`() = live {
        val game = seatedAtItsTurn("transparent retry")
        // The transport's defaults, as an app gets them.
        val seat = TableServiceCoroutineStub(throughRelay(transparentRetry = true))
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(bearer(game.seatToken)))
        val reactions = watchReactions(game)
        try {
            relay.loseNextAnswer()
            // One plain call, no helper: it succeeds, yet the server was sent it twice.
            seat.sendReaction(sendReactionRequest { name = game.name; reaction = Reaction.REACTION_WOW })
            assertEquals(2, relay.callsStarted, "calls that reached the server")
            assertEquals(2, reactions.awaitAtLeast(2), "the one reaction was shown twice")
        } finally {
            reactions.stop()
        }
    }

    private fun live(body: suspend CoroutineScope.() -> Unit) = runBlocking { withTimeout(TEST_TIMEOUT) { body() } }

    /** A channel through the relay; [transparentRetry] false turns grpc-java's own resend off. */
    private fun throughRelay(transparentRetry: Boolean): ManagedChannel {
        val builder = OkHttpChannelBuilder.forTarget(relay.address, InsecureChannelCredentials.create())
        if (!transparentRetry) builder.disableRetry()
        return builder.build().also { channels += it }
    }

    private class Game(val name: String, val seatToken: String, val view: TableView)

    /** A table with three heuristic bots and seat 0 taken, its cards passed: the seat is to play. */
    private suspend fun seatedAtItsTurn(label: String): Game {
        val created = client.createTableWithThreeBots("kotlin retry: $label")
        val name = created.view.table.name
        tablesToDelete += name to created.creatorToken
        val joined = client.joinTable(joinTableRequest { this.name = name; seat = 0; playerDisplayName = "kotlin retry" })
        var view = joined.view
        if (view.cardsToPass > 0) {
            view = client.passCards(
                passCardsRequest { this.name = name; cards += view.legalCardsList.take(view.cardsToPass) },
                bearer(joined.seatToken),
            ).view
        }
        if (view.legalCardsCount == 0) fail("seat 0 is not to play after passing (the bots move inline): $view")
        return Game(name, joined.seatToken, view)
    }

    /** Counts the reactions on [game]'s table from a watch that is live when this returns. */
    private suspend fun CoroutineScope.watchReactions(game: Game): Reactions {
        val live = CompletableDeferred<Unit>()
        val count = AtomicInteger()
        val job = launch {
            client.watchTable(watchTableRequest { name = game.name; afterSequence = game.view.sequence }, bearer(game.seatToken))
                .collect { message ->
                    // The seat's own presence follows the replayed events: the stream is live.
                    if (message.event.hasPresenceChanged()) live.complete(Unit)
                    if (message.event.hasReaction()) count.incrementAndGet()
                }
        }
        withTimeout(10.seconds) { live.await() }
        return Reactions(count, job)
    }

    private class Reactions(private val count: AtomicInteger, private val job: kotlinx.coroutines.Job) {
        /** The reactions seen, once there are [least] and no more came for a while. */
        suspend fun awaitAtLeast(least: Int): Int {
            withTimeout(10.seconds) { while (count.get() < least) delay(10.milliseconds) }
            delay(QUIET)
            return count.get()
        }

        fun stop() = job.cancel()
    }
}

/** Records each PlayCard request as it is sent, one per attempt. */
private class Recorder(private val sent: MutableList<PlayCardRequest>) : ClientInterceptor {
    override fun <ReqT, RespT> interceptCall(
        method: MethodDescriptor<ReqT, RespT>,
        callOptions: CallOptions,
        next: Channel,
    ): ClientCall<ReqT, RespT> = object : ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT>(next.newCall(method, callOptions)) {
        override fun sendMessage(message: ReqT) {
            if (message is PlayCardRequest) sent += message
            super.sendMessage(message)
        }
    }
}
