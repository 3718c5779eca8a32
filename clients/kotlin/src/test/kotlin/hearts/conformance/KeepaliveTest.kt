/*
 * Keepalive finds out a connection that died silently. A watch stream on a connection whose
 * network vanished (a mobile NAT entry dropped, a phone switching networks) hears nothing: no
 * FIN, no RST, no error. Without keepalive pings it waits forever; with them the client sees its
 * ping go unanswered and the stream fails with UNAVAILABLE, which an app answers by watching
 * again with after_sequence.
 *
 * The test puts a TCP relay on loopback between the client and the live server at HEARTS_SERVER
 * (skipped without one; scripts/with-server.sh starts one and sets it), opens a spectator
 * WatchTable through it with keepalive 10 s (the least grpc-java and the server allow) and 2 s,
 * takes the snapshot, and cuts the relay: nothing is forwarded any more, either way, and every
 * socket stays open. The stream must fail with UNAVAILABLE within STREAM_FAILS; it takes about
 * 12 s (10 s of silence, 2 s for the ping's answer).
 */
package hearts.conformance

import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.WatchTableResponse
import hearts.v1.deleteTableRequest
import hearts.v1.watchTableRequest
import io.grpc.InsecureChannelCredentials
import io.grpc.ManagedChannel
import io.grpc.Metadata
import io.grpc.Status
import io.grpc.StatusException
import io.grpc.okhttp.OkHttpChannelBuilder
import io.grpc.stub.MetadataUtils
import java.net.InetSocketAddress
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.fail

/** How long the stream may take to fail after the cut: 10 s of silence and 2 s for the ping, with room. */
private val STREAM_FAILS = 30.seconds

/** How long the snapshot may take to arrive. */
private val SNAPSHOT_WAIT = 10.seconds

class KeepaliveTest {
    @Test
    fun `a watch stream on a connection that died silently fails with UNAVAILABLE`() {
        val address = System.getenv("HEARTS_SERVER")
        assumeTrue(!address.isNullOrEmpty(), "HEARTS_SERVER is unset; run under scripts/with-server.sh")
        val target = InetSocketAddress(address.substringBeforeLast(':'), address.substringAfterLast(':').toInt())

        // The table is made and deleted over a direct connection, with the README's keepalive.
        val direct = OkHttpChannelBuilder.forTarget(address, InsecureChannelCredentials.create())
            .keepAliveTime(60, TimeUnit.SECONDS)
            .keepAliveTimeout(20, TimeUnit.SECONDS)
            .build()
        val relay = Relay(target)
        // The watch goes through the relay, with the shortest keepalive the server accepts.
        val watched = OkHttpChannelBuilder.forTarget(relay.address, InsecureChannelCredentials.create())
            .keepAliveTime(10, TimeUnit.SECONDS)
            .keepAliveTimeout(2, TimeUnit.SECONDS)
            .build()
        try {
            runBlocking { withTimeout(STREAM_FAILS + SNAPSHOT_WAIT + 20.seconds) { watchThroughCut(direct, watched, relay) } }
        } finally {
            relay.close()
            shutDown(watched)
            shutDown(direct)
        }
    }

    private suspend fun watchThroughCut(direct: ManagedChannel, watched: ManagedChannel, relay: Relay) {
        val client = TableServiceCoroutineStub(direct)
        // Three bots and an empty seat: the table waits for a player, and its stream stays quiet.
        val created = client.createTableWithThreeBots("kotlin keepalive")
        val name = created.view.table.name
        try {
            watchAndCut(watched, name, relay)
        } finally {
            val creator = Metadata().apply {
                put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer ${created.creatorToken}")
            }
            withContext(NonCancellable) {
                client.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(creator))
                    .deleteTable(deleteTableRequest { this.name = name })
            }
        }
    }

    /** Watches [name] through the relay, cuts the relay after the snapshot, and checks how the stream ends. */
    private suspend fun watchAndCut(watched: ManagedChannel, name: String, relay: Relay) = coroutineScope {
        val first = CompletableDeferred<WatchTableResponse>()
        val ended = CompletableDeferred<Throwable?>()
        val watching = launch {
            try {
                // A spectator: no token.
                TableServiceCoroutineStub(watched).watchTable(watchTableRequest { this.name = name }).collect { first.complete(it) }
                ended.complete(null)
            } catch (e: StatusException) {
                ended.complete(e)
            }
        }
        try {
            val snapshot = withTimeoutOrNull(SNAPSHOT_WAIT) { first.await() }
                ?: fail("no snapshot within $SNAPSHOT_WAIT through the relay (stream ended: ${ended.isCompleted})")
            if (!snapshot.hasSnapshot() || snapshot.snapshot.table.name != name) {
                fail("the first message is not a snapshot of $name: $snapshot")
            }

            relay.cut()
            val cutAt = TimeSource.Monotonic.markNow()
            log("relay cut after the snapshot of $name; waiting for the stream to fail")
            val error = withTimeoutOrNull(STREAM_FAILS) { ended.await() }
            val elapsed = cutAt.elapsedNow()
            when {
                !ended.isCompleted -> fail(
                    "the watch stream was still open $STREAM_FAILS after its connection went silent: " +
                        "no keepalive ping found out the dead connection",
                )
                error == null -> fail("the watch stream ended cleanly ${elapsed.inWholeMilliseconds} ms after the cut, want UNAVAILABLE")
                error !is StatusException || error.status.code != Status.Code.UNAVAILABLE ->
                    fail("the watch stream failed with $error ${elapsed.inWholeMilliseconds} ms after the cut, want UNAVAILABLE")
                // No ping is due before 10 s of silence: an earlier end is something else.
                elapsed < 8.seconds -> fail("the watch stream failed ${elapsed.inWholeMilliseconds} ms after the cut, before a ping was due: $error")
            }
            log("the stream failed ${elapsed.inWholeMilliseconds} ms after the cut: $error")
        } finally {
            watching.cancel()
        }
    }

    private fun shutDown(channel: ManagedChannel) {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
    }

    private fun log(message: String) = println("[kotlin keepalive] $message")
}
