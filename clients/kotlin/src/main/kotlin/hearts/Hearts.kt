/*
 * The few helpers every Kotlin (or Java) client of hearts.v1 would otherwise write itself, beside
 * the generated code in hearts.v1: a seat token's metadata, the card notation that the server,
 * the docs and the other clients use ("QS", "TD"), and the stable reason (and the legal cards) of
 * a refused call. From Java they are static methods of `hearts.Hearts`.
 */
@file:JvmName("Hearts")

package hearts

import com.google.protobuf.kotlin.isA
import com.google.protobuf.kotlin.unpack
import com.google.rpc.ErrorInfo
import hearts.v1.Card
import hearts.v1.MoveRejection
import hearts.v1.Rank
import hearts.v1.Suit
import hearts.v1.card
import io.grpc.Metadata
import io.grpc.protobuf.StatusProto

private val AUTHORIZATION: Metadata.Key<String> = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)
private const val RANKS = "23456789TJQKA"
private const val SUITS = "CDHS"

/**
 * The metadata that carries a seat or creator token: `authorization: Bearer <token>`. A new
 * instance each time: grpc-java adds its own headers to the `Metadata` a call starts with, so one
 * must not be shared by calls in flight (a stub made with `MetadataUtils.newAttachHeadersInterceptor`
 * copies it into every call and is safe to share).
 */
fun bearer(token: String): Metadata = Metadata().apply { put(AUTHORIZATION, "Bearer $token") }

/** The card as text: rank then suit (`2C`, `TD`, `QS`); a card that names no card as `?suit/rank`. */
fun formatCard(card: Card): String {
    val rank = card.rankValue - Rank.RANK_TWO_VALUE
    val suit = card.suitValue - Suit.SUIT_CLUBS_VALUE
    if (rank !in RANKS.indices || suit !in SUITS.indices) return "?${card.suitValue}/${card.rankValue}"
    return "${RANKS[rank]}${SUITS[suit]}"
}

/**
 * The card written as [text]: a rank (`2`-`9`, `T` or `10`, `J`, `Q`, `K`, `A`) then a suit (`C`,
 * `D`, `H`, `S`), in either case, as the other clients read it. Throws
 * [IllegalArgumentException] for anything else.
 */
fun parseCard(text: String): Card {
    // ASCII letters only: uppercase() would read "ſ" (U+017F) as "S".
    var upper = text.map { if (it in 'a'..'z') it.uppercaseChar() else it }.joinToString("")
    if (upper.length == 3 && upper.startsWith("10")) upper = "T" + upper.substring(2)
    val rank = if (upper.length == 2) RANKS.indexOf(upper[0]) else -1
    val suit = if (upper.length == 2) SUITS.indexOf(upper[1]) else -1
    require(rank >= 0 && suit >= 0) {
        "\"$text\" is not a card: write rank (2-9, T or 10, J, Q, K, A) then suit (C, D, H, S), as QS"
    }
    return card {
        rankValue = Rank.RANK_TWO_VALUE + rank
        suitValue = Suit.SUIT_CLUBS_VALUE + suit
    }
}

/**
 * The stable, machine-readable reason of a failed call (its `google.rpc.ErrorInfo`, such as
 * `MUST_FOLLOW_SUIT` or `ETAG_MISMATCH`; docs/api.md lists them), or null when [error] carries
 * none (an error of the transport, say: see its status code then). Takes the coroutine stubs'
 * `StatusException` and the blocking stubs' `StatusRuntimeException` alike.
 */
fun errorReason(error: Throwable): String? = detail<ErrorInfo>(error)?.reason

/** The `MoveRejection` of a refused `passCards` or `playCard` (why, and the legal cards now), or null. */
fun moveRejection(error: Throwable): MoveRejection? = detail<MoveRejection>(error)

private inline fun <reified T : com.google.protobuf.Message> detail(error: Throwable): T? =
    StatusProto.fromThrowable(error)?.detailsList?.firstOrNull { it.isA<T>() }?.unpack<T>()
