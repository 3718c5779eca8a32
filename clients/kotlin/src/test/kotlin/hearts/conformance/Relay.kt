package hearts.conformance

import java.io.DataInputStream
import java.io.IOException
import java.io.OutputStream
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread

/** What a client sends first on an HTTP/2 connection, before any frame. */
private const val PREFACE_BYTES = 24

/** The HTTP/2 frame type that opens a call (client to server) or answers it (server to client). */
private const val HEADERS: Int = 0x1

/**
 * A TCP relay on loopback in front of [target], for the plaintext HTTP/2 of gRPC, that can fail
 * the network in two ways:
 *
 * - [cut]: traffic stops dead, as when a client's network vanishes without a word. Nothing is
 *   forwarded any more (what arrives is read and dropped) and no socket is closed, so no FIN or
 *   RST reaches either end; a connection accepted then reaches nothing.
 * - [loseNextAnswer]: the first answer the server sends after it (a HEADERS frame, which the
 *   server sends once the call has run) is not passed on; the connection that carried it is
 *   closed both ways instead, as one lost after the server acted and before the answer arrived.
 *
 * Otherwise it forwards every frame, and a half-close, each way; [callsStarted] counts the calls
 * that clients started through it (HEADERS frames sent up), on every connection. [close] closes
 * everything.
 */
internal class Relay(private val target: InetSocketAddress) : AutoCloseable {
    private val listener = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    private val sockets = ConcurrentLinkedQueue<Socket>()
    private val started = AtomicInteger()

    @Volatile
    private var cut = false

    @Volatile
    private var loseAnswer = false

    @Volatile
    private var closed = false

    val address = "127.0.0.1:${listener.localPort}"

    /** The calls started through the relay so far, as the server was sent them. */
    val callsStarted: Int get() = started.get()

    init {
        thread(isDaemon = true, name = "relay accept") {
            while (!closed) {
                val client = try {
                    listener.accept()
                } catch (e: IOException) {
                    break
                }
                sockets += client
                if (cut) continue
                val server = Socket()
                sockets += server
                try {
                    server.connect(target, 5_000)
                } catch (e: IOException) {
                    client.close()
                    continue
                }
                for (s in listOf(client, server)) s.tcpNoDelay = true
                pump(client, server, up = true)
                pump(server, client, up = false)
            }
        }
    }

    /** Stops forwarding, both ways, and leaves every socket open. */
    fun cut() {
        cut = true
    }

    /** Loses the next answer from the server, and closes the connection it came on. */
    fun loseNextAnswer() {
        loseAnswer = true
    }

    private fun pump(from: Socket, to: Socket, up: Boolean) = thread(isDaemon = true, name = if (up) "relay up" else "relay down") {
        try {
            val input = DataInputStream(from.getInputStream())
            val output = to.getOutputStream()
            if (up) forward(output, ByteArray(PREFACE_BYTES).also(input::readFully))
            while (true) {
                val frame = readFrame(input) ?: break
                val type = frame[3].toInt() and 0xff
                val stream = ((frame[5].toInt() and 0x7f) shl 24) or ((frame[6].toInt() and 0xff) shl 16) or
                    ((frame[7].toInt() and 0xff) shl 8) or (frame[8].toInt() and 0xff)
                if (type == HEADERS && stream != 0) {
                    if (up) {
                        started.incrementAndGet()
                    } else if (loseAnswer && !cut) {
                        loseAnswer = false
                        from.close()
                        to.close()
                        break
                    }
                }
                forward(output, frame)
            }
            if (!cut) to.shutdownOutput()
        } catch (e: IOException) {
            // A reset before the cut goes on as one; after it (or after close), nothing is told.
            if (!cut && !closed) {
                from.close()
                to.close()
            }
        }
    }

    /** Writes [bytes] on, unless the relay is cut. */
    private fun forward(output: OutputStream, bytes: ByteArray) {
        if (!cut) output.write(bytes)
    }

    override fun close() {
        closed = true
        listener.close()
        for (socket in sockets) {
            try {
                socket.close()
            } catch (e: IOException) {
                // Closing anyway.
            }
        }
    }
}

/** One whole HTTP/2 frame, its 9-byte header first, or null at the end of the stream between frames. */
private fun readFrame(input: DataInputStream): ByteArray? {
    val first = input.read()
    if (first < 0) return null
    val header = ByteArray(9)
    header[0] = first.toByte()
    input.readFully(header, 1, 8)
    val length = ((header[0].toInt() and 0xff) shl 16) or ((header[1].toInt() and 0xff) shl 8) or (header[2].toInt() and 0xff)
    val frame = header.copyOf(9 + length)
    input.readFully(frame, 9, length)
    return frame
}
