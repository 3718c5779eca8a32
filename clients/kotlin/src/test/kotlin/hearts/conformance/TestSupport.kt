package hearts.conformance

import hearts.v1.BotLevel
import hearts.v1.CreateTableResponse
import hearts.v1.SeatOccupant
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.createTableRequest
import hearts.v1.rules
import hearts.v1.seat
import hearts.v1.table
import io.grpc.InsecureChannelCredentials
import io.grpc.ManagedChannel
import io.grpc.okhttp.OkHttpChannelBuilder
import java.util.UUID
import java.util.concurrent.TimeUnit

/** A channel to [address] with keepalive as the README's example sets it (KeepaliveTest checks
 * what it is for). */
internal fun readmeChannel(address: String): ManagedChannel =
    OkHttpChannelBuilder.forTarget(address, InsecureChannelCredentials.create())
        .keepAliveTime(60, TimeUnit.SECONDS)
        .keepAliveTimeout(20, TimeUnit.SECONDS)
        .build()

/** A new table to 20 points with heuristic bots in seats 1 to 3 and seat 0 free for the test. */
internal suspend fun TableServiceCoroutineStub.createTableWithThreeBots(displayName: String): CreateTableResponse =
    createTable(
        createTableRequest {
            table = table {
                this.displayName = displayName
                rules = rules { targetScore = 20 }
                for (botSeat in 1..3) {
                    seats += seat {
                        seat = botSeat
                        occupant = SeatOccupant.SEAT_OCCUPANT_BOT
                        botLevel = BotLevel.BOT_LEVEL_HEURISTIC
                    }
                }
            }
            requestId = UUID.randomUUID().toString()
        },
    )
