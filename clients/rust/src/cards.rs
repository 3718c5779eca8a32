//! The project's card notation: rank then suit, ranks `2`-`9`, `T`, `J`, `Q`, `K`, `A` and suits
//! `C`, `D`, `H`, `S` (`2C`, `TD`, `QS`, `AH`).

use std::{error::Error, fmt, str::FromStr};

use crate::v1::{Card, Rank, Suit};

const RANKS: [(char, Rank); 13] = [
    ('2', Rank::Two),
    ('3', Rank::Three),
    ('4', Rank::Four),
    ('5', Rank::Five),
    ('6', Rank::Six),
    ('7', Rank::Seven),
    ('8', Rank::Eight),
    ('9', Rank::Nine),
    ('T', Rank::Ten),
    ('J', Rank::Jack),
    ('Q', Rank::Queen),
    ('K', Rank::King),
    ('A', Rank::Ace),
];

const SUITS: [(char, Suit); 4] =
    [('C', Suit::Clubs), ('D', Suit::Diamonds), ('H', Suit::Hearts), ('S', Suit::Spades)];

impl Card {
    /// The card of `rank` and `suit`.
    pub fn new(rank: Rank, suit: Suit) -> Self {
        Card { suit: suit as i32, rank: rank as i32 }
    }
}

/// Writes the card as `QS`; a card that names no card (an unset or unknown suit or rank) as
/// `?suit/rank` with the numbers.
impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rank = RANKS.iter().find(|(_, r)| *r as i32 == self.rank);
        let suit = SUITS.iter().find(|(_, s)| *s as i32 == self.suit);
        match (rank, suit) {
            (Some((r, _)), Some((s, _))) => write!(f, "{r}{s}"),
            _ => write!(f, "?{}/{}", self.suit, self.rank),
        }
    }
}

/// Reads `QS`, `td`, `2C`, `10H`: a rank (`2`-`9`, `T` or `10`, `J`, `Q`, `K`, `A`) and a suit
/// letter, in either case, as the other clients read them.
impl FromStr for Card {
    type Err = ParseCardError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParseCardError(text.to_owned());
        let short = match text.strip_prefix("10") {
            Some(suit) if suit.chars().count() == 1 => format!("T{suit}"),
            _ => text.to_owned(),
        };
        let mut chars = short.chars().map(|c| c.to_ascii_uppercase());
        let (Some(r), Some(s), None) = (chars.next(), chars.next(), chars.next()) else {
            return Err(error());
        };
        let (_, rank) = RANKS.iter().find(|(c, _)| *c == r).ok_or_else(error)?;
        let (_, suit) = SUITS.iter().find(|(c, _)| *c == s).ok_or_else(error)?;
        Ok(Card::new(*rank, *suit))
    }
}

/// A text that is not a card in the project's notation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseCardError(String);

impl fmt::Display for ParseCardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a card: write rank (2-9, T, J, Q, K, A) then suit (C, D, H, S), as QS",
            self.0
        )
    }
}

impl Error for ParseCardError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_round_trips() {
        for (r, rank) in RANKS {
            for (s, suit) in SUITS {
                let card = Card::new(rank, suit);
                let text = format!("{r}{s}");
                assert_eq!(card.to_string(), text);
                assert_eq!(text.parse::<Card>(), Ok(card));
                assert_eq!(text.to_lowercase().parse::<Card>(), Ok(card));
            }
        }
    }

    #[test]
    fn examples() {
        let queen = Card::new(Rank::Queen, Suit::Spades);
        assert_eq!("QS".parse::<Card>(), Ok(queen));
        assert_eq!(queen.suit(), Suit::Spades);
        assert_eq!(queen.rank(), Rank::Queen);
        assert_eq!("TD".parse::<Card>().unwrap().rank(), Rank::Ten);
        let ten = Card::new(Rank::Ten, Suit::Diamonds);
        assert_eq!("10D".parse::<Card>(), Ok(ten));
        assert_eq!("10d".parse::<Card>(), Ok(ten));
        assert_eq!("qs".parse::<Card>(), Ok(queen));
    }

    #[test]
    fn malformed_text_is_refused() {
        for text in ["", "Q", "QSS", "10", "100D", "1C", "QX", "SQ", " QS", "Q♠"] {
            let error = text.parse::<Card>().unwrap_err();
            assert!(error.to_string().contains("is not a card"), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_card_that_names_no_card_still_prints() {
        assert_eq!(Card::default().to_string(), "?0/0");
        let card = Card { suit: 9, rank: 12 };
        assert_eq!(card.to_string(), "?9/12");
    }
}
