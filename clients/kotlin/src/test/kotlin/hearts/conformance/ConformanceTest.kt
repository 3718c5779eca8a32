/*
 * Plays Hearts against a live hearts-server through the generated Kotlin client, as an Android or
 * JVM app would: the coroutine stubs over the OkHttp transport, the seat token as `authorization`
 * metadata, error details read with StatusProto. It checks what a client relies on: the watch
 * stream tells the whole game in order (and the seat's presence, never a bot's), a refused move
 * says why, a forged token is refused,
 * SuggestMove's moves are legal and play a game out, RematchTable seats the player again, four
 * players who QuickJoin at once are seated together and play their game out, and a signed-in
 * player (an identity token) finds its tables with ListPlayerTables and its seat again on a new
 * device. That test needs HEARTS_IDENTITY_SECRET, the secret the server checks identity tokens
 * with (scripts/with-server.sh sets it), and is skipped without it.
 *
 * The tests need a server at HEARTS_SERVER (host:port) and are skipped without one;
 * scripts/with-server.sh starts one and sets it. They never choose a card the seat's own view does
 * not offer, except where a test means to break a rule.
 *
 * Every game is reproducible: HEARTS_CONFORMANCE_SEED (default: the clock) is the deck seed, which
 * also seeds the server's bots, and the seed of the test's own card choices. Failures print it.
 * (QuickJoin takes no deck seed: there the seed replays the test's choices, not the deal.)
 */
package hearts.conformance

import hearts.errorReason
import hearts.formatCard
import hearts.moveRejection
import com.google.protobuf.kotlin.isA
import com.google.protobuf.kotlin.unpack
import com.google.rpc.ErrorInfo
import hearts.v1.MoveRejection
import hearts.v1.PlayerTable
import hearts.v1.GameOverEvent
import hearts.v1.TableEvent
import hearts.v1.BotLevel
import hearts.v1.Card
import hearts.v1.JoinTableResponse
import hearts.v1.Phase
import hearts.v1.PlayedCard
import hearts.v1.PresenceChangedEvent
import hearts.v1.ReactionEvent
import hearts.v1.RoundScore
import hearts.v1.SeatOccupant
import hearts.v1.TableView
import hearts.v1.Trick
import hearts.v1.TableServiceGrpcKt.TableServiceCoroutineStub
import hearts.v1.WatchTableResponse
import hearts.v1.tableEvent
import hearts.v1.tableView
import hearts.v1.watchTableResponse
import hearts.v1.createTableRequest
import hearts.v1.deleteTableRequest
import hearts.v1.getTableRequest
import hearts.v1.joinTableRequest
import hearts.v1.leaveTableRequest
import hearts.v1.listPlayerTablesRequest
import hearts.v1.passCardsRequest
import hearts.v1.playCardRequest
import hearts.v1.quickJoinRequest
import hearts.v1.rematchTableRequest
import hearts.v1.rules
import hearts.v1.seat
import hearts.v1.suggestMoveRequest
import hearts.v1.table
import hearts.v1.watchTableRequest
import com.google.protobuf.duration
import io.grpc.ManagedChannel
import io.grpc.Metadata
import io.grpc.Status
import io.grpc.StatusException
import io.grpc.protobuf.StatusProto
import io.grpc.stub.MetadataUtils
import java.util.Base64
import java.util.UUID
import java.util.concurrent.TimeUnit
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInfo
import org.junit.jupiter.api.fail

/** A game is kept to a few rounds. */
private const val TARGET_SCORE = 20

/**
 * The quick game's target score: a few rounds, and asked for by no other test, so that QuickJoin
 * seats only that test's four players at its table.
 */
private const val QUICK_TARGET_SCORE = 21

/** The quick game's turn timeout: far longer than the game takes. */
private const val QUICK_TURN_TIMEOUT_SECONDS = 90L

/** The seat the test joins; the other three are heuristic bots. */
private const val HUMAN_SEAT = 0

/** Bounds each test; a whole game with inline bots takes well under a second. */
private val TEST_TIMEOUT = 60.seconds

/** How long the watch stream may lag behind the calls. */
private val STREAM_WAIT = 10.seconds

private val AUTHORIZATION: Metadata.Key<String> =
    Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)

class ConformanceTest {
    private lateinit var address: String
    private lateinit var channel: ManagedChannel
    private lateinit var client: TableServiceCoroutineStub
    private lateinit var testName: String
    private val tablesToDelete = mutableListOf<Pair<String, String>>() // name to creator token

    companion object {
        private const val SKIP_MESSAGE =
            "HEARTS_SERVER is unset; run under scripts/with-server.sh to test against a live server"

        /** Says once, even under `mvn -q`, why every test is about to be skipped. */
        @JvmStatic
        @BeforeAll
        fun announceSkip() {
            if (System.getenv("HEARTS_SERVER").isNullOrEmpty()) System.err.println("[kotlin conformance] skipped: $SKIP_MESSAGE")
        }
    }

    @BeforeEach
    fun connect(info: TestInfo) {
        val address = System.getenv("HEARTS_SERVER")
        assumeTrue(!address.isNullOrEmpty(), SKIP_MESSAGE)
        this.address = address
        testName = info.displayName
        channel = readmeChannel(address)
        client = TableServiceCoroutineStub(channel)
    }

    @AfterEach
    fun disconnect() {
        if (!::channel.isInitialized) return
        runBlocking {
            // The whole-game test deletes its table itself; NOT_FOUND is fine here.
            for ((name, creatorToken) in tablesToDelete) {
                try {
                    client.withToken(creatorToken).deleteTable(deleteTableRequest { this.name = name })
                } catch (e: StatusException) {
                    if (e.status.code != Status.Code.NOT_FOUND) throw AssertionError("DeleteTable $name: ${describe(e)}", e)
                }
            }
        }
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
    }

    @Test
    fun `the watch stream tells a whole game in order`() = play { seed ->
        val game = newGame(seed)
        val watch = Watcher.start(
            this,
            game.seat.watchTable(watchTableRequest { name = game.name; afterSequence = game.view.sequence }),
        )

        val rng = Random(seed)
        var view = game.view
        var moves = 0
        while (view.table.phase != Phase.PHASE_GAME_OVER) {
            view = move(game, view, rng)
            moves++
        }
        log("seed $seed: game over after ${view.table.roundNumber} rounds and $moves moves of seat $HUMAN_SEAT")

        // The game_over event may still be in flight when the last move's response arrives.
        watch.waitFor("game_over") { it.hasGameOver() }
        val final = game.seat.getTable(getTableRequest { name = game.name }).view

        // Deleting the table must end the stream, after a TableDeletedEvent.
        client.withToken(game.creatorToken).deleteTable(deleteTableRequest { name = game.name })
        val stream = watch.end()
        if (stream.error != null) {
            fail("the watch stream ended with ${describe(stream.error)}, want a clean end after table_deleted")
        }
        checkStream(game.view.sequence, stream.messages, final)
    }

    @Test
    fun `an illegal play is refused with its reason and the legal cards`() = play { seed ->
        val game = newGame(seed)
        val rng = Random(seed + 1)

        var view = game.view
        while (view.table.phase != Phase.PHASE_GAME_OVER) {
            val offSuit = offSuitCard(view)
            if (offSuit == null) {
                view = move(game, view, rng)
                continue
            }
            val led = view.currentTrick.cardsList.first().card
            val situation = "seat $HUMAN_SEAT played ${formatCard(offSuit)} to a trick led with ${formatCard(led)}, " +
                "holding ${notations(view.handList)}"

            val got = expectFailure {
                game.seat.playCard(playCardRequest { name = game.name; card = offSuit })
            }
            val failures = Failures(situation)
            if (got.code != Status.Code.FAILED_PRECONDITION) fail("$situation: got ${got.code}, want FAILED_PRECONDITION")
            if (got.info.domain != "hearts.v1" || got.info.reason != "MUST_FOLLOW_SUIT") {
                fail("$situation: ErrorInfo is ${got.info.domain}/${got.info.reason}, want hearts.v1/MUST_FOLLOW_SUIT")
            }
            val table = got.info.metadataMap["table"]
            if (table != game.name) failures.add("ErrorInfo metadata table=\"$table\", want \"${game.name}\"")
            val rejection = got.rejection ?: fail("$situation: the status carries no hearts.v1.MoveRejection")
            if (rejection.reason != got.info.reason) {
                failures.add("MoveRejection reason ${rejection.reason} differs from ErrorInfo reason ${got.info.reason}")
            }
            if (rejection.legalCardsList != view.legalCardsList) {
                failures.add(
                    "MoveRejection legal_cards ${notations(rejection.legalCardsList)}, " +
                        "want the view's ${notations(view.legalCardsList)}",
                )
            }
            if (rejection.cardsToPass != 0) failures.add("MoveRejection cards_to_pass ${rejection.cardsToPass} while playing, want 0")
            val after = game.seat.getTable(getTableRequest { name = game.name }).view
            if (after.table.etag != view.table.etag) failures.add("a refused play changed the table's etag")
            failures.check()
            log("seed $seed: $situation: ${got.code} ${got.info.reason}, legal ${notations(rejection.legalCardsList)}")
            return@play
        }
        fail("the game ended before seat $HUMAN_SEAT could play off suit while holding the led suit")
    }

    @Test
    fun `a forged token is unauthenticated`() = play { seed ->
        val game = newGame(seed)
        val rng = Random(seed + 2)

        var view = game.view
        while (view.legalCardsCount == 0 || view.cardsToPass > 0) {
            view = move(game, view, rng)
        }
        val card = view.legalCardsList.first()

        val forgeries = listOf(
            "claims signed with another secret" to forgeToken(game.name, HUMAN_SEAT),
            "the real claims with another signature" to tamperSignature(game.seatToken),
            "not a token at all" to "not-a-token",
        )
        val failures = Failures("PlayCard(${formatCard(card)}) on the seat's turn")
        for ((what, token) in forgeries) {
            // Per-call headers, as an alternative to the interceptor of withToken.
            val headers = Metadata().apply { put(AUTHORIZATION, "Bearer $token") }
            val got = expectFailure { client.playCard(playCardRequest { name = game.name; this.card = card }, headers) }
            if (got.code != Status.Code.UNAUTHENTICATED) {
                failures.add("with $what: got ${got.code}, want UNAUTHENTICATED")
            } else if (got.info.domain != "hearts.v1" || got.info.reason != "TOKEN_INVALID") {
                failures.add("with $what: ErrorInfo ${got.info.domain}/${got.info.reason}, want hearts.v1/TOKEN_INVALID")
            } else {
                log("seed $seed: $what: ${got.code} ${got.info.reason}")
            }
        }
        val after = game.seat.getTable(getTableRequest { name = game.name }).view
        if (after.table.etag != view.table.etag) failures.add("a play with a forged token changed the table")
        failures.check()
    }

    @Test
    fun `suggested moves play a whole game, then a rematch seats the player again`() = play { seed ->
        val game = newGame(seed)
        var view = game.view

        // RematchTable before the end is refused with its reason.
        val early = expectFailure {
            game.seat.rematchTable(rematchTableRequest { name = game.name; requestId = UUID.randomUUID().toString() })
        }
        if (early.code != Status.Code.FAILED_PRECONDITION || early.info.reason != "GAME_NOT_OVER") {
            fail("RematchTable in play: ${early.code} ${early.info.reason}, want FAILED_PRECONDITION GAME_NOT_OVER")
        }

        // Every move of the seat is the one SuggestMove suggests: legal, on the current etag.
        var moves = 0
        while (view.table.phase != Phase.PHASE_GAME_OVER) {
            if (++moves > 2000) fail("no game over after 2000 moves")
            if (view.legalCardsCount == 0) {
                delay(20.milliseconds)
                view = call("GetTable") { game.seat.getTable(getTableRequest { name = game.name }) }.view
                continue
            }
            val hint = call("SuggestMove") { game.seat.suggestMove(suggestMoveRequest { name = game.name }) }
            val want = if (view.cardsToPass > 0) view.cardsToPass else 1
            if (hint.etag != view.table.etag || hint.cardsCount != want) {
                fail("SuggestMove gave ${notations(hint.cardsList)} at etag ${hint.etag}; want $want cards at ${view.table.etag}")
            }
            if (!view.legalCardsList.containsAll(hint.cardsList)) {
                fail("SuggestMove gave ${notations(hint.cardsList)}, not among ${notations(view.legalCardsList)}")
            }
            view = if (want == 1) {
                call("PlayCard ${formatCard(hint.cardsList[0])}") {
                    game.seat.playCard(
                        playCardRequest {
                            name = game.name
                            card = hint.cardsList[0]
                            etag = hint.etag
                            requestId = UUID.randomUUID().toString()
                        },
                    )
                }.view
            } else {
                call("PassCards ${notations(hint.cardsList)}") {
                    game.seat.passCards(
                        passCardsRequest {
                            name = game.name
                            cards += hint.cardsList
                            etag = hint.etag
                            requestId = UUID.randomUUID().toString()
                        },
                    )
                }.view
            }
        }
        val over = expectFailure { game.seat.suggestMove(suggestMoveRequest { name = game.name }) }
        if (over.code != Status.Code.FAILED_PRECONDITION || over.info.reason != "GAME_OVER") {
            fail("SuggestMove after the game: ${over.code} ${over.info.reason}, want FAILED_PRECONDITION GAME_OVER")
        }

        // The rematch: the same seat at a new table, the two tables naming each other.
        val rematch = call("RematchTable ${game.name}") {
            game.seat.rematchTable(rematchTableRequest { name = game.name; requestId = UUID.randomUUID().toString() })
        }
        val next = rematch.view.table
        log("seed $seed: $moves suggested moves; rematch of ${game.name} at ${next.name}")
        val failures = Failures("RematchTable after game over")
        if (rematch.seat != HUMAN_SEAT || rematch.view.viewerSeat != HUMAN_SEAT) {
            failures.add("seat ${rematch.seat}, viewer seat ${rematch.view.viewerSeat}; want $HUMAN_SEAT")
        }
        if (rematch.seatToken.isEmpty() || rematch.seatToken == game.seatToken) failures.add("no new seat token")
        if (next.name == game.name || !next.name.startsWith("tables/")) failures.add("the new table is \"${next.name}\"")
        if (next.rematchOf != game.name) failures.add("rematch_of is \"${next.rematchOf}\", want ${game.name}")
        val finished = call("GetTable") { game.seat.getTable(getTableRequest { name = game.name }) }.view.table
        if (finished.rematchTable != next.name) failures.add("the finished table's rematch_table is \"${finished.rematchTable}\"")
        failures.check()
    }

    @Test
    fun `four players who quick-join at once share one table and play it out`() = play { seed ->
        val requests = (1..4).map { player ->
            quickJoinRequest {
                rules = rules {
                    targetScore = QUICK_TARGET_SCORE
                    queenBreaksHearts = true
                }
                turnTimeout = duration { seconds = QUICK_TURN_TIMEOUT_SECONDS }
                playerDisplayName = "kotlin quick $player"
                requestId = UUID.randomUUID().toString()
            }
        }
        // Four players press "play now" at the same moment.
        val joined = requests.map { request ->
            async { call("QuickJoin as ${request.playerDisplayName}") { client.quickJoin(request) } }
        }.awaitAll()
        val name = joined.first().view.table.name
        log("seed $seed: quick joins seated at ${joined.map { "${it.view.table.name} seat ${it.seat}" }}")
        val seated = Failures("four concurrent QuickJoins")
        if (joined.any { it.view.table.name != name } || !name.startsWith("tables/")) {
            seated.add("tables ${joined.map { it.view.table.name }}, want one")
        }
        if (joined.map { it.seat }.sorted() != listOf(0, 1, 2, 3)) seated.add("seats ${joined.map { it.seat }}, want 0 to 3 once each")
        for ((request, response) in requests.zip(joined)) {
            if (response.seatToken.isEmpty() || response.view.viewerSeat != response.seat || response.etag != response.view.table.etag) {
                seated.add(
                    "${request.playerDisplayName}: seat ${response.seat}, viewer seat ${response.view.viewerSeat}, " +
                        "a token of ${response.seatToken.length} bytes, etag ${response.etag} for the view's ${response.view.table.etag}",
                )
            }
        }
        seated.check()

        // The fourth join started the game, with the rules and the turn timeout asked for.
        val players = joined.sortedBy { it.seat }.map { Game(name, "", it.seatToken, client.withToken(it.seatToken), it.view) }
        val started = call("GetTable $name") { players[0].seat.getTable(getTableRequest { this.name = name }) }.view
        val table = started.table
        val game = Failures("the quick game after the fourth join")
        if (table.phase != Phase.PHASE_PASSING || started.cardsToPass != 3) {
            game.add("phase ${table.phase} with ${started.cardsToPass} cards to pass, want passing with 3")
        }
        if (table.rules.targetScore != QUICK_TARGET_SCORE || !table.rules.queenBreaksHearts) {
            game.add("rules target_score ${table.rules.targetScore}, queen_breaks_hearts ${table.rules.queenBreaksHearts}; want $QUICK_TARGET_SCORE, true")
        }
        if (table.turnTimeout.seconds != QUICK_TURN_TIMEOUT_SECONDS) game.add("turn_timeout ${table.turnTimeout.seconds} s")
        for ((request, response) in requests.zip(joined)) {
            val seat = table.seatsList.firstOrNull { it.seat == response.seat }
            if (seat?.occupant != SeatOccupant.SEAT_OCCUPANT_HUMAN || seat.playerDisplayName != request.playerDisplayName) {
                game.add("seat ${response.seat} holds ${seat?.occupant} \"${seat?.playerDisplayName}\", want ${request.playerDisplayName}")
            }
        }
        game.check()

        // A retry (same request_id) gets the first call's seat, though the game has started since.
        for ((request, first) in requests.zip(joined)) {
            val again = call("QuickJoin retry as ${request.playerDisplayName}") { client.quickJoin(request) }
            if (again.view.table.name != name || again.seat != first.seat || again.seatToken != first.seatToken) {
                fail(
                    "a retried QuickJoin of ${request.playerDisplayName} gave ${again.view.table.name} seat ${again.seat}; " +
                        "want $name seat ${first.seat} with the first call's token",
                )
            }
        }

        val final = playOut(players, Random(seed + 3))
        log("seed $seed: quick game $name over after ${final.table.roundNumber} rounds, totals ${final.table.totalScoresList}")
        val highest = final.table.totalScoresList.maxOrNull() ?: 0
        if (highest < QUICK_TARGET_SCORE || final.table.result.winnersCount == 0) {
            fail("the quick game ended with totals ${final.table.totalScoresList} and result ${final.table.result}")
        }
    }

    @Test
    fun `a signed-in player lists its tables and finds its seat again`() {
        val secret = System.getenv("HEARTS_IDENTITY_SECRET").orEmpty()
        assumeTrue(secret.isNotEmpty(), "HEARTS_IDENTITY_SECRET is unset: the server checks no identity tokens")
        play { seed ->
            // A player no other test or run has seen: its list holds this test's tables only.
            val player = "kotlin-player-${UUID.randomUUID()}"
            val identity = signIdentity(secret, player)
            val listed = waitingTable(seed, unlisted = false)
            val unlisted = waitingTable(seed, unlisted = true)
            val first = signedJoin(listed, identity, seat = 2)
            val second = signedJoin(unlisted, identity, seat = 1)
            log("seed $seed: $player joined $listed at seat 2 and $unlisted (unlisted) at seat 1")

            // Both tables, the unlisted one too, the one joined last first, each with the seat held.
            val mine = myTables(identity)
            val listing = Failures("ListPlayerTables after joining two tables")
            val want = listOf(unlisted to second.seat, listed to first.seat)
            if (places(mine) != want) listing.add("tables ${places(mine)}, want $want")
            for (entry in mine) {
                val holder = entry.table.seatsList.firstOrNull { it.seat == entry.seat }
                if (holder?.occupant != SeatOccupant.SEAT_OCCUPANT_HUMAN || holder.playerId != player) {
                    listing.add("${entry.table.name} seat ${entry.seat} holds ${holder?.occupant} with player_id \"${holder?.playerId}\"")
                }
            }
            if (mine.firstOrNull()?.table?.unlisted != true) listing.add("the first entry is not the unlisted table")
            listing.check()

            // A new device: the identity token alone finds the seat again and gets a token for it.
            val again = call("JoinTable $listed with the identity token only") {
                client.joinTable(
                    joinTableRequest {
                        name = listed
                        playerDisplayName = "kotlin conformance"
                        identityToken = identity
                        requestId = UUID.randomUUID().toString()
                    },
                )
            }
            if (again.seat != first.seat || again.seatToken.isEmpty()) {
                fail("joining again gave seat ${again.seat} and a token of ${again.seatToken.length} bytes; want seat ${first.seat} and its token")
            }
            val seat = client.withToken(again.seatToken)
            val view = call("GetTable $listed with the new seat token") { seat.getTable(getTableRequest { name = listed }) }.view
            val held = view.table.seatsList.filter { it.playerId == player }.map { it.seat }
            if (!view.hasViewerSeat() || view.viewerSeat != first.seat || held != listOf(first.seat)) {
                fail(
                    "the new token shows viewer seat ${view.viewerSeat} (set: ${view.hasViewerSeat()}) " +
                        "and the player at seats $held; want seat ${first.seat} only",
                )
            }

            // The seat given up (the game has not started): the table leaves the list.
            call("LeaveTable $listed") {
                seat.leaveTable(leaveTableRequest { name = listed; requestId = UUID.randomUUID().toString() })
            }
            val left = places(myTables(identity))
            if (left != listOf(unlisted to second.seat)) fail("ListPlayerTables after leaving $listed: $left, want only $unlisted")

            // Only an identity token names a player; a seat token names one seat of one table.
            val refusals = Failures("ListPlayerTables without an identity token")
            val callers = listOf("no token at all" to client, "a seat token instead" to client.withToken(second.seatToken))
            for ((what, caller) in callers) {
                val got = expectFailure { caller.listPlayerTables(listPlayerTablesRequest {}) }
                if (got.code != Status.Code.UNAUTHENTICATED || got.info.domain != "hearts.v1" || got.info.reason != "IDENTITY_REQUIRED") {
                    refusals.add(
                        "with $what: ${got.code} ${got.info.domain}/${got.info.reason}, " +
                            "want UNAUTHENTICATED hearts.v1/IDENTITY_REQUIRED",
                    )
                }
            }
            refusals.check()
        }
    }

    /** The example in README.md (kept equal to src/test/kotlin/example/Example.kt by ci.sh) runs. */
    @Test
    fun `the README example runs`() {
        example.main(arrayOf(address))
    }

    // ------------------------------------------------------------------------------- the game

    /** A table the test created (or QuickJoin found) and a seat the test joined there. */
    private class Game(
        val name: String,
        /** Empty for a table QuickJoin made: it has no creator. */
        val creatorToken: String,
        val seatToken: String,
        /** The stub that acts for the seat: every call carries its token. */
        val seat: TableServiceCoroutineStub,
        /** The seat's view right after joining. */
        val view: TableView,
    )

    /**
     * Runs a test body with a seed and a deadline; a failure names the seed, so that it can be
     * replayed with HEARTS_CONFORMANCE_SEED.
     */
    private fun play(body: suspend CoroutineScope.(seed: Long) -> Unit) {
        val seed = System.getenv("HEARTS_CONFORMANCE_SEED")?.let {
            it.toLongOrNull() ?: fail("HEARTS_CONFORMANCE_SEED=\"$it\" is not an integer")
        } ?: (System.nanoTime() and ((1L shl 62) - 1))
        log("$testName: seed $seed (rerun with HEARTS_CONFORMANCE_SEED=$seed)")
        try {
            runBlocking { withTimeout(TEST_TIMEOUT) { body(seed) } }
        } catch (e: Throwable) {
            throw AssertionError("seed $seed: ${e.message ?: e}", e)
        }
    }

    /**
     * Creates a table with three heuristic bots and a small target score, and joins the remaining
     * seat, which deals the first round. The table is deleted after the test.
     */
    private suspend fun newGame(seed: Long): Game {
        val created = call("CreateTable") {
            client.createTable(
                createTableRequest {
                    table = table {
                        displayName = "kotlin conformance $testName"
                        rules = rules { targetScore = TARGET_SCORE }
                        deckSeed = seed
                        for (botSeat in 0 until 4) {
                            if (botSeat == HUMAN_SEAT) continue
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
        }
        val name = created.view.table.name
        if (!name.startsWith("tables/") || created.creatorToken.isEmpty()) {
            fail("CreateTable returned name \"$name\" and a creator token of ${created.creatorToken.length} bytes")
        }
        tablesToDelete += name to created.creatorToken

        val joined = call("JoinTable $name") {
            client.joinTable(
                joinTableRequest {
                    this.name = name
                    seat = HUMAN_SEAT
                    playerDisplayName = "kotlin conformance"
                    requestId = UUID.randomUUID().toString()
                },
            )
        }
        val view = joined.view
        if (joined.seat != HUMAN_SEAT || view.viewerSeat != HUMAN_SEAT || view.handCount != 13) {
            fail(
                "JoinTable gave seat ${joined.seat}, viewer seat ${view.viewerSeat} and ${view.handCount} cards; " +
                    "want seat $HUMAN_SEAT with 13 cards",
            )
        }
        val phase = view.table.phase
        if (phase != Phase.PHASE_PASSING && phase != Phase.PHASE_PLAYING) {
            fail("after the fourth seat joined the phase is $phase, want passing or playing")
        }
        return Game(name, created.creatorToken, joined.seatToken, client.withToken(joined.seatToken), view)
    }

    /**
     * Creates a table without bots, listed or not, which waits for players: a seat there can be
     * given up with LeaveTable. The table is deleted after the test.
     */
    private suspend fun waitingTable(seed: Long, unlisted: Boolean): String {
        val created = call("CreateTable") {
            client.createTable(
                createTableRequest {
                    table = table {
                        displayName = "kotlin conformance $testName"
                        deckSeed = seed
                        this.unlisted = unlisted
                    }
                    requestId = UUID.randomUUID().toString()
                },
            )
        }
        val name = created.view.table.name
        tablesToDelete += name to created.creatorToken
        return name
    }

    /** Joins [seat] of the table [name] as the player of [identityToken]. */
    private suspend fun signedJoin(name: String, identityToken: String, seat: Int): JoinTableResponse {
        val joined = call("JoinTable $name seat $seat with an identity token") {
            client.joinTable(
                joinTableRequest {
                    this.name = name
                    this.seat = seat
                    playerDisplayName = "kotlin conformance"
                    this.identityToken = identityToken
                    requestId = UUID.randomUUID().toString()
                },
            )
        }
        if (joined.seat != seat || joined.view.viewerSeat != seat) {
            fail("JoinTable $name gave seat ${joined.seat}, viewer seat ${joined.view.viewerSeat}; want $seat")
        }
        return joined
    }

    /** The tables where the player of [identityToken] holds a seat (ListPlayerTables). */
    private suspend fun myTables(identityToken: String): List<PlayerTable> =
        call("ListPlayerTables") {
            client.listPlayerTables(listPlayerTablesRequest { this.identityToken = identityToken })
        }.tablesList

    /** The tables' names and the seats held there, for comparisons and failure messages. */
    private fun places(tables: List<PlayerTable>): List<Pair<String, Int>> = tables.map { it.table.name to it.seat }

    /**
     * Makes the seat's next move, chosen at random from what its own view offers, and returns the
     * view after it. When the seat owes no move (it never should with inline bots, but a client
     * may not assume that) it reads the table again instead.
     */
    private suspend fun move(game: Game, view: TableView, rng: Random): TableView {
        val legal = view.legalCardsList
        return when {
            view.cardsToPass > 0 -> {
                // While passing, legal_cards are the cards the seat may pass: its hand.
                val chosen = legal.shuffled(rng).take(view.cardsToPass)
                call("PassCards ${notations(chosen)} from ${notations(view.handList)}") {
                    game.seat.passCards(
                        passCardsRequest {
                            name = game.name
                            cards += chosen
                            etag = view.table.etag
                            requestId = UUID.randomUUID().toString()
                        },
                    )
                }.view
            }
            legal.isNotEmpty() -> {
                val chosen = legal.random(rng)
                call("PlayCard ${formatCard(chosen)} (legal ${notations(legal)})") {
                    game.seat.playCard(
                        playCardRequest {
                            name = game.name
                            card = chosen
                            etag = view.table.etag
                            requestId = UUID.randomUUID().toString()
                        },
                    )
                }.view
            }
            else -> {
                delay(20.milliseconds)
                call("GetTable") { game.seat.getTable(getTableRequest { name = game.name }) }.view
            }
        }
    }

    /**
     * Plays a game whose four seats the test holds ([players], in seat order) to the end: each
     * time the seat that owes a move (while passing, the first that has not passed; in play, the
     * seat whose turn it is) reads its view and moves as [move] does. Returns the last view.
     */
    private suspend fun playOut(players: List<Game>, rng: Random): TableView {
        val first = players.first()
        var view = call("GetTable") { first.seat.getTable(getTableRequest { name = first.name }) }.view
        var moves = 0
        while (view.table.phase != Phase.PHASE_GAME_OVER) {
            if (++moves > 2000) fail("no game over after 2000 moves")
            val table = view.table
            val mover = when {
                table.phase == Phase.PHASE_PASSING -> table.seatsList.firstOrNull { !it.hasPassed }?.seat
                table.phase == Phase.PHASE_PLAYING && table.hasTurnSeat() -> table.turnSeat
                else -> null
            } ?: fail("no seat owes a move in ${table.phase} (turn seat set: ${table.hasTurnSeat()})")
            val game = players[mover]
            val before = call("GetTable as seat $mover") { game.seat.getTable(getTableRequest { name = game.name }) }.view
            view = move(game, before, rng)
        }
        return view
    }

    /**
     * A card whose play breaks "follow suit": it is the seat's turn, a suit was led, and the seat
     * holds that suit and this card of another.
     */
    private fun offSuitCard(view: TableView): Card? {
        val trick = view.currentTrick.cardsList
        if (view.legalCardsCount == 0 || trick.isEmpty()) return null
        val led = trick.first().card.suit
        if (view.handList.none { it.suit == led }) return null
        return view.handList.firstOrNull { it.suit != led }
    }

    // ------------------------------------------------------------------------------- the stream

    /** One WatchTable stream, collected in the background. */
    private class Watcher private constructor() {
        class State(
            val messages: List<WatchTableResponse> = emptyList(),
            val ended: Boolean = false,
            /** Null when the stream ended cleanly (status OK). */
            val error: StatusException? = null,
        )

        private val state = MutableStateFlow(State())

        /** Waits until the stream has delivered an event that satisfies [want]. */
        suspend fun waitFor(what: String, want: (TableEvent) -> Boolean) {
            val seen = withTimeoutOrNull(STREAM_WAIT) {
                state.first { s -> s.ended || s.messages.any { it.hasEvent() && want(it.event) } }
            } ?: fail("$what did not arrive on the watch stream within $STREAM_WAIT")
            if (seen.messages.none { it.hasEvent() && want(it.event) }) {
                fail("the watch stream ended (${seen.error?.let(::describe)}) before $what")
            }
        }

        /** Waits for the stream to end and returns what it delivered. */
        suspend fun end(): State =
            withTimeoutOrNull(STREAM_WAIT) { state.first { it.ended } }
                ?: fail("the watch stream did not end within $STREAM_WAIT of the table's deletion")

        companion object {
            fun start(scope: CoroutineScope, stream: Flow<WatchTableResponse>): Watcher {
                val watcher = Watcher()
                scope.launch {
                    try {
                        stream.collect { message ->
                            watcher.state.update { State(it.messages + message) }
                        }
                        watcher.state.update { State(it.messages, ended = true) }
                    } catch (e: StatusException) {
                        watcher.state.update { State(it.messages, ended = true, error = e) }
                    }
                }
                return watcher
            }
        }
    }

    /**
     * Checks the messages of a stream that began right after sequence [after] and ran until the
     * table was deleted, against the seat's final view of the finished game.
     */
    private fun checkStream(after: Long, messages: List<WatchTableResponse>, final: TableView) {
        val failures = Failures("the watch stream")

        // The first round was dealt by the join, before `after`; later rounds start on the stream.
        var round = 1
        var nextTrick = 1
        val trickCards = mutableListOf<PlayedCard>() // cards played to the trick in progress
        val tricks = mutableListOf<Trick>() // the completed tricks of the round
        val scores = mutableListOf<RoundScore>()
        var gameOver: GameOverEvent? = null
        val totals = IntArray(4)
        var last = after
        var deleted = false
        val presences = mutableListOf<Pair<Int, Boolean>>() // seat to connected

        for ((i, message) in messages.withIndex()) {
            if (!inSequence(last, message)) failures.add("message $i has sequence ${message.sequence} after $last; sequences must grow")
            last = message.sequence
            if (message.hasSnapshot()) {
                failures.add("message $i is a snapshot: the stream could not resume after $after, so events were lost")
                continue
            }
            if (deleted) failures.add("message $i came after table_deleted")
            val event = message.event
            when (event.eventCase) {
                TableEvent.EventCase.ROUND_STARTED -> {
                    val number = event.roundStarted.roundNumber
                    if (number != round + 1 || scores.size != round) {
                        failures.add("round_started $number after ${scores.size} scored rounds, in round $round")
                    }
                    round = number
                    nextTrick = 1
                    tricks.clear()
                }
                TableEvent.EventCase.CARD_PLAYED -> {
                    val played = event.cardPlayed
                    if (played.trickNumber != nextTrick) {
                        failures.add(
                            "round $round: card_played ${formatCard(played.card)} for trick ${played.trickNumber} " +
                                "while trick $nextTrick is in progress",
                        )
                    }
                    trickCards += PlayedCard.newBuilder().setSeat(played.seat).setCard(played.card).build()
                }
                TableEvent.EventCase.TRICK_WON -> {
                    val trick = event.trickWon.trick
                    if (trick.number != nextTrick) failures.add("round $round: trick_won for trick ${trick.number}, want trick $nextTrick")
                    if (!trick.hasWinner() || trick.cardsCount != 4) {
                        failures.add(
                            "round $round trick ${trick.number}: winner set ${trick.hasWinner()} with " +
                                "${trick.cardsCount} cards, want a winner and 4 cards",
                        )
                    }
                    if (trick.cardsList != trickCards) {
                        failures.add(
                            "round $round trick ${trick.number}: trick_won holds ${played(trick.cardsList)} but the " +
                                "stream's card_played events were ${played(trickCards)}",
                        )
                    }
                    trickCards.clear()
                    tricks += trick
                    nextTrick++
                }
                TableEvent.EventCase.ROUND_SCORED -> {
                    val score = event.roundScored.score
                    if (score.roundNumber != round) failures.add("round_scored for round ${score.roundNumber} in round $round")
                    if (tricks.size != 13) failures.add("round $round was scored after ${tricks.size} trick_won events, want 13")
                    checkRoundPoints(failures, round, score, tricks)
                    for (seat in 0 until 4) totals[seat] += score.getPoints(seat)
                    if (score.totalScoresList != totals.toList()) {
                        failures.add("round $round: total_scores ${score.totalScoresList}, want the sum of the rounds' points ${totals.toList()}")
                    }
                    scores += score
                }
                TableEvent.EventCase.GAME_OVER -> {
                    gameOver = event.gameOver
                    if (scores.size != round) failures.add("game_over after ${scores.size} round_scored events in round $round")
                }
                TableEvent.EventCase.TABLE_DELETED -> deleted = true
                TableEvent.EventCase.PRESENCE_CHANGED -> presences += event.presenceChanged.seat to event.presenceChanged.connected
                else -> {}
            }
        }
        // The seat is the one player, and its stream was open throughout: the stream reports it
        // connected once, after the resumed events, and nothing else (never a bot).
        if (presences != listOf(HUMAN_SEAT to true)) {
            failures.add("presence_changed events (seat to connected) $presences, want only ${listOf(HUMAN_SEAT to true)}")
        }

        val table = final.table
        val over = gameOver
        when {
            over == null -> failures.add("the stream delivered no game_over event")
            !deleted -> failures.add("the stream ended without a table_deleted event")
            else -> {
                if (over.totalScoresList != table.totalScoresList) {
                    failures.add("game_over total_scores ${over.totalScoresList}, GetTable total_scores ${table.totalScoresList}")
                }
                if (over.totalScoresList != totals.toList()) {
                    failures.add("game_over total_scores ${over.totalScoresList}, sum of round_scored points ${totals.toList()}")
                }
                if (over.result != table.result) failures.add("game_over result ${over.result}, GetTable result ${table.result}")
            }
        }
        if (table.roundNumber != scores.size) failures.add("the stream scored ${scores.size} rounds, GetTable says round ${table.roundNumber}")
        val history = final.scoreHistoryList
        if (history.size != scores.size) failures.add("GetTable score_history has ${history.size} rounds, the stream scored ${scores.size}")
        for ((view, event) in history.zip(scores)) {
            if (view.roundNumber != event.roundNumber || view.pointsList != event.pointsList ||
                view.totalScoresList != event.totalScoresList
            ) {
                failures.add("GetTable score_history round ${view.roundNumber} $view differs from the stream's round_scored $event")
            }
            if (view.hasMoonShooter() != event.hasMoonShooter() || view.moonShooter != event.moonShooter) {
                failures.add(
                    "round ${event.roundNumber}: the stream's round_scored has moon_shooter set ${event.hasMoonShooter()} " +
                        "(${event.moonShooter}), GetTable score_history set ${view.hasMoonShooter()} (${view.moonShooter})",
                )
            }
        }
        val highest = table.totalScoresList.maxOrNull() ?: 0
        if (highest < TARGET_SCORE) failures.add("the game ended with totals ${table.totalScoresList}, none at the target $TARGET_SCORE")
        log("the stream told ${scores.size} rounds, ${scores.size * 13} tricks, final totals ${table.totalScoresList}")
        failures.check()
    }

    /**
     * Whether a watch stream may deliver [message] after a message numbered [last]: numbers grow,
     * except that an unstored event (a reaction, a presence change), which has no number of its
     * own, repeats the number of the event before it.
     */
    private fun inSequence(last: Long, message: WatchTableResponse): Boolean {
        val unstored = message.hasEvent() && (message.event.hasReaction() || message.event.hasPresenceChanged())
        return message.sequence > last || (message.sequence == last && unstored)
    }

    @Test
    fun `only an unstored event repeats a sequence number`() {
        fun event(sequence: Long, value: TableEvent) = watchTableResponse { this.sequence = sequence; event = value }
        val reaction = tableEvent { reaction = ReactionEvent.newBuilder().setSeat(0).build() }
        val presence = tableEvent { presenceChanged = PresenceChangedEvent.newBuilder().setSeat(1).setConnected(true).build() }
        val played = tableEvent { cardPlayed = hearts.v1.CardPlayedEvent.getDefaultInstance() }
        val snapshot = watchTableResponse { sequence = 7; snapshot = tableView {} }
        val cases = listOf(
            Triple("an event numbered after the last", event(8, played), true),
            Triple("a reaction repeating the last number", event(7, reaction), true),
            Triple("a reaction numbered before the last", event(6, reaction), false),
            Triple("a presence change repeating the last number", event(7, presence), true),
            Triple("a presence change numbered after the last (the event before it was another seat's)", event(8, presence), true),
            Triple("a presence change numbered before the last", event(6, presence), false),
            Triple("an event repeating the last number", event(7, played), false),
            Triple("a snapshot repeating the last number", snapshot, false),
        )
        for ((what, message, allowed) in cases) {
            if (inSequence(7, message) != allowed) fail("after sequence 7, $what: inSequence is ${!allowed}, want $allowed")
        }
    }

    /**
     * Checks a round's points against its tricks under the default rules (no bonuses): each seat
     * scores the points of the tricks it won, unless someone shot the moon.
     */
    private fun checkRoundPoints(failures: Failures, round: Int, score: RoundScore, tricks: List<Trick>) {
        val taken = IntArray(4)
        for (trick in tricks) taken[trick.winner] += trick.points
        val want = if (score.hasMoonShooter()) IntArray(4) { if (it == score.moonShooter) 0 else 26 } else taken
        if (score.pointsList != want.toList()) {
            failures.add(
                "round $round: points ${score.pointsList}, but the tricks won (moon shooter set: " +
                    "${score.hasMoonShooter()}) make ${want.toList()}",
            )
        }
    }

    // ------------------------------------------------------------------------------- errors

    /** Runs a call that must fail, and reads its status code and google.rpc.Status details. */
    private suspend fun expectFailure(block: suspend () -> Unit): CallError {
        try {
            block()
        } catch (e: StatusException) {
            return decodeError(e)
        }
        fail("the call succeeded, want an error")
    }

    // ------------------------------------------------------------------------------- helpers

    /** Runs a call that must succeed; a failure names the call and the error's reason. */
    private suspend fun <T> call(what: String, block: suspend () -> T): T =
        try {
            block()
        } catch (e: StatusException) {
            throw AssertionError("$what: ${describe(e)}", e)
        }

    private fun log(message: String) = println("[kotlin conformance] $message")

    /** Collects the failures of one check, so that a run reports all of them at once. */
    private class Failures(private val context: String) {
        private val messages = mutableListOf<String>()

        fun add(message: String) {
            messages += message
        }

        fun check() {
            if (messages.isNotEmpty()) fail("$context:\n  " + messages.joinToString("\n  "))
        }
    }
}

/** A stub whose every call sends the token as `authorization: Bearer <token>`. */
private fun TableServiceCoroutineStub.withToken(token: String): TableServiceCoroutineStub =
    withInterceptors(MetadataUtils.newAttachHeadersInterceptor(Metadata().apply { put(AUTHORIZATION, "Bearer $token") }))

/** A failed call as a client sees it. */
private class CallError(val code: Status.Code, val info: ErrorInfo, val rejection: MoveRejection?)

/** Reads the status code and the ErrorInfo and MoveRejection details of a failed call. */
private fun decodeError(e: StatusException): CallError {
    val status = StatusProto.fromThrowable(e)
        ?: fail("${e.status.code} \"${e.status.description}\" carries no google.rpc.Status details")
    var info: ErrorInfo? = null
    var rejection: MoveRejection? = null
    for (detail in status.detailsList) {
        when {
            detail.isA<ErrorInfo>() -> info = detail.unpack<ErrorInfo>()
            detail.isA<MoveRejection>() -> rejection = detail.unpack<MoveRejection>()
        }
    }
    // The client's helpers read the same details.
    if (errorReason(e) != info?.reason || moveRejection(e) != rejection) {
        fail("errorReason ${errorReason(e)} / moveRejection ${moveRejection(e)} differ from the details read here")
    }
    return CallError(
        e.status.code,
        info ?: fail("${e.status.code} \"${e.status.description}\" carries no google.rpc.ErrorInfo"),
        rejection,
    )
}

/** An error with its ErrorInfo reason, for failure messages. */
private fun describe(e: StatusException): String {
    val info = StatusProto.fromThrowable(e)?.detailsList?.firstOrNull { it.isA<ErrorInfo>() }?.unpack<ErrorInfo>()
    return if (info == null) "${e.status.code}: ${e.status.description}" else "${e.status.code} ${info.reason}: ${e.status.description}"
}

// ------------------------------------------------------------------------------- tokens

/**
 * A token in the server's format (v1.<claims>.<signature>) for the seat, signed with a secret the
 * server does not have.
 */
private fun forgeToken(tableName: String, seat: Int): String {
    val expires = System.currentTimeMillis() / 1000 + 3600
    val claims = """{"t":"${tableName.removePrefix("tables/")}","s":$seat,"e":0,"x":$expires}"""
    val encoder = Base64.getUrlEncoder().withoutPadding()
    val body = encoder.encodeToString(claims.toByteArray())
    val mac = Mac.getInstance("HmacSHA256").apply {
        init(SecretKeySpec("not-the-server-secret-0123456789".toByteArray(), "HmacSHA256"))
    }
    return "v1.$body." + encoder.encodeToString(mac.doFinal(body.toByteArray()))
}

/**
 * An HS256 JWT for [subject], valid for an hour, as an app's backend signs it after sign-in; the
 * server checks it with the same [secret].
 */
private fun signIdentity(secret: String, subject: String): String {
    // Written into the JSON as it is: the tests' subjects need no escaping.
    require(subject.all { it.isLetterOrDigit() || it == '-' }) { "subject \"$subject\"" }
    val encoder = Base64.getUrlEncoder().withoutPadding()
    val expires = System.currentTimeMillis() / 1000 + 3600
    val header = encoder.encodeToString("""{"alg":"HS256","typ":"JWT"}""".toByteArray())
    val claims = encoder.encodeToString("""{"sub":"$subject","exp":$expires}""".toByteArray())
    val mac = Mac.getInstance("HmacSHA256").apply { init(SecretKeySpec(secret.toByteArray(), "HmacSHA256")) }
    val signing = "$header.$claims"
    return signing + "." + encoder.encodeToString(mac.doFinal(signing.toByteArray()))
}

/** A real token's claims with its signature replaced. */
private fun tamperSignature(token: String): String {
    val parts = token.split(".")
    if (parts.size != 3) fail("the seat token has ${parts.size} dot-separated parts; this test assumes v1.<claims>.<signature>")
    return parts[0] + "." + parts[1] + "." + "A".repeat(parts[2].length)
}

// ------------------------------------------------------------------------------- cards

private fun notations(cards: List<Card>): String = cards.joinToString(" ", "[", "]") { formatCard(it) }

private fun played(cards: List<PlayedCard>): String = cards.joinToString(" ", "[", "]") { "${it.seat}:${formatCard(it.card)}" }
