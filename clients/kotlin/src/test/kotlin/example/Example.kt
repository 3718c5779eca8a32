package example

import hearts.bearer
import hearts.errorReason
import hearts.formatCard
import hearts.moveRejection
import hearts.v1.BotLevel
import hearts.v1.SeatOccupant
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.createTableRequest
import hearts.v1.deleteTableRequest
import hearts.v1.joinTableRequest
import hearts.v1.passCardsRequest
import hearts.v1.playCardRequest
import hearts.v1.rules
import hearts.v1.seat
import hearts.v1.table
import hearts.watchTableResumable
import io.grpc.InsecureChannelCredentials
import io.grpc.StatusException
import io.grpc.okhttp.OkHttpChannelBuilder
import io.grpc.stub.MetadataUtils
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

fun main(args: Array<String>) = runBlocking {
    val address = args.firstOrNull() ?: "127.0.0.1:50051"
    // Plaintext for a local server; use TlsChannelCredentials.create() for a real one.
    // Keepalive: while a call is open, a connection silent for 60 s gets a ping, and one whose
    // answer takes over 20 s is given up, so that a stream on a connection that died silently
    // fails with UNAVAILABLE instead of hanging. The time must stay at least 10 s.
    val channel = OkHttpChannelBuilder.forTarget(address, InsecureChannelCredentials.create())
        .keepAliveTime(60, TimeUnit.SECONDS)
        .keepAliveTimeout(20, TimeUnit.SECONDS)
        .build()
    val client = TableServiceCoroutineStub(channel)
    try {
        // Seats 1 to 3 start as bots; seat 0 stays empty for us. Unset rules take the defaults.
        val created = client.createTable(
            createTableRequest {
                table = table {
                    displayName = "evening game"
                    rules = rules { targetScore = 50 }
                    for (botSeat in 1..3) {
                        seats += seat {
                            seat = botSeat
                            occupant = SeatOccupant.SEAT_OCCUPANT_BOT
                            botLevel = BotLevel.BOT_LEVEL_HEURISTIC
                        }
                    }
                }
            },
        )
        val tableName = created.view.table.name // "tables/..."

        val joined = client.joinTable(
            joinTableRequest {
                name = tableName
                seat = 0
                playerDisplayName = "Ada"
            },
        )
        // Every call through this stub carries the seat token.
        val seat = client.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(bearer(joined.seatToken)))

        // Watch from just after the join, so that no event is missed. The flow resumes by itself
        // after a dropped connection, and ends once the table is deleted.
        val watching = launch {
            seat.watchTableResumable(tableName, afterSequence = joined.view.sequence)
                .collect { message ->
                    if (message.event.hasTrickWon()) {
                        val trick = message.event.trickWon.trick
                        println("trick ${trick.number} won by seat ${trick.winner} (${trick.points} points)")
                    }
                }
        }

        // The view says what the seat may do: pass cardsToPass cards, or play one of legalCards.
        var view = joined.view
        if (view.cardsToPass > 0) {
            val cards = view.legalCardsList.take(view.cardsToPass)
            view = seat.passCards(passCardsRequest { name = tableName; this.cards += cards }).view
        }
        if (view.legalCardsCount > 0) {
            val card = view.legalCardsList.first()
            println("playing ${formatCard(card)}") // cards print as "QS"; parseCard("QS") reads one
            try {
                view = seat.playCard(playCardRequest { name = tableName; this.card = card }).view
            } catch (e: StatusException) {
                // A refused move says why, and which cards would have been legal.
                println("${e.status.code}: ${errorReason(e)}") // e.g. FAILED_PRECONDITION: MUST_FOLLOW_SUIT
                moveRejection(e)?.let { println("legal now: ${it.legalCardsList.map(::formatCard)}") }
            }
        }
        println("round ${view.table.roundNumber}, trick ${view.currentTrick.number}, ${view.handCount} cards in hand")

        // Only the creator token may delete the table; deleting it ends every watch stream.
        client.deleteTable(deleteTableRequest { name = tableName }, bearer(created.creatorToken))
        watching.join()
    } finally {
        channel.shutdownNow()
    }
}
