package hearts

import com.google.protobuf.Any
import com.google.rpc.ErrorInfo
import hearts.v1.Rank
import hearts.v1.Suit
import hearts.v1.card
import hearts.v1.moveRejection as moveRejectionMessage
import io.grpc.Metadata
import io.grpc.Status
import io.grpc.protobuf.StatusProto
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class HeartsTest {
    @Test
    fun everyCardFormatsAndParsesBack() {
        val texts = mutableSetOf<String>()
        for (suit in Suit.SUIT_CLUBS_VALUE..Suit.SUIT_SPADES_VALUE) {
            for (rank in Rank.RANK_TWO_VALUE..Rank.RANK_ACE_VALUE) {
                val card = card { suitValue = suit; rankValue = rank }
                val text = formatCard(card)
                assertEquals(card, parseCard(text))
                texts += text
            }
        }
        assertEquals(52, texts.size)
        assertEquals("QS", formatCard(parseCard("QS")))
        assertEquals("?0/0", formatCard(card {}))
    }

    @Test
    fun cardsAreReadInEitherCaseAndWith10() {
        assertEquals("QS", formatCard(parseCard("qs")))
        assertEquals("TD", formatCard(parseCard("10D")))
        assertEquals("TH", formatCard(parseCard("10h")))
        for (text in listOf("", "Q", "SQ", "1C", "10", "100C", "QSS", " QS", "Q♠", "Qſ")) {
            assertThrows<IllegalArgumentException>(text) { parseCard(text) }
        }
    }

    @Test
    fun bearerCarriesTheToken() {
        val key = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)
        assertEquals("Bearer abc", bearer("abc").get(key))
    }

    @Test
    fun reasonAndRejectionComeFromTheStatusDetails() {
        val status = com.google.rpc.Status.newBuilder()
            .setCode(Status.Code.FAILED_PRECONDITION.value())
            .setMessage("follow suit")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("MUST_FOLLOW_SUIT").setDomain("hearts.v1").build()))
            .addDetails(
                Any.pack(moveRejectionMessage { reason = "MUST_FOLLOW_SUIT"; legalCards += parseCard("2C") }),
            )
            .build()
        for (error in listOf(StatusProto.toStatusException(status), StatusProto.toStatusRuntimeException(status))) {
            assertEquals("MUST_FOLLOW_SUIT", errorReason(error))
            assertEquals(listOf(parseCard("2C")), moveRejection(error)?.legalCardsList)
        }
        val bare = Status.UNAVAILABLE.asException()
        assertNull(errorReason(bare))
        assertNull(moveRejection(bare))
        assertNull(errorReason(IllegalStateException("plain")))
    }
}
