//! Check characters: `{check}` in a template, computed over the digits of the rest of the ID,
//! so that a typing error in an order or invoice number is caught before any lookup.
//!
//! Every varying part of an ID with a check is digits (the spec's rules see to it), and the
//! constant parts (prefix, literal text) are compared as they are; so a check over the digits
//! covers everything a typing error can change.

/// A check character scheme, for `{check}`: see [`SpecBuilder::check`](crate::SpecBuilder::check)
/// (the `check-characters` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// Luhn (mod 10, as on payment cards): one digit. Catches every single-digit error and
    /// every swap of two adjacent digits but `09` ↔ `90`.
    Luhn,
    /// Damm: one digit. Catches every single-digit error and every swap of two adjacent digits.
    Damm,
    /// ISO 7064 MOD 97-10 (as in IBAN and LEI): two digits. Catches every single-digit error
    /// and every swap of two adjacent digits.
    Iso7064Mod97_10,
}

impl Check {
    /// Reads a scheme's name: `luhn`, `damm` or `iso7064-mod97-10`.
    pub fn parse(name: &str) -> Option<Check> {
        Some(match name {
            "luhn" => Check::Luhn,
            "damm" => Check::Damm,
            "iso7064-mod97-10" => Check::Iso7064Mod97_10,
            _ => return None,
        })
    }

    /// The scheme's name, as [`Check::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Check::Luhn => "luhn",
            Check::Damm => "damm",
            Check::Iso7064Mod97_10 => "iso7064-mod97-10",
        }
    }

    /// How many digits the check adds.
    pub fn width(self) -> u32 {
        match self {
            Check::Luhn | Check::Damm => 1,
            Check::Iso7064Mod97_10 => 2,
        }
    }

    /// Appends the check of the digits in `text` (anything else is skipped) to `out`.
    pub(crate) fn push(self, text: &str, out: &mut String) {
        let digits = text.chars().filter(char::is_ascii_digit);
        match self {
            #[cfg(feature = "check-characters")]
            Check::Luhn => out.extend(iso_7064::extra::LUHN.compute_from_chars_lax(digits)),
            #[cfg(feature = "check-characters")]
            Check::Iso7064Mod97_10 => out.extend(iso_7064::MOD97_10.compute_from_chars_lax(digits)),
            Check::Damm => out.push(char::from(b'0' + damm(digits))),
            // No spec has a check without the feature: `SpecBuilder::build` refuses it.
            #[cfg(not(feature = "check-characters"))]
            Check::Luhn | Check::Iso7064Mod97_10 => {}
        }
    }

    /// The check of the digits in `text`, as text.
    pub(crate) fn of(self, text: &str) -> String {
        let mut out = String::with_capacity(2);
        self.push(text, &mut out);
        out
    }
}

/// The Damm check digit: the digits through the quasigroup of order 10 below (weakly totally
/// anti-symmetric), which no maintained crate provides.
fn damm(digits: impl Iterator<Item = char>) -> u8 {
    const TABLE: [[u8; 10]; 10] = [
        [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
        [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
        [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
        [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
        [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
        [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
        [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
        [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
        [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
        [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
    ];
    digits.fold(0, |interim, digit| {
        TABLE[usize::from(interim)][digit as usize - '0' as usize]
    })
}

#[cfg(all(test, feature = "check-characters"))]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(Check::Damm.of("572"), "4");
        assert_eq!(Check::Luhn.of("7992739871"), "3");
        // IBAN GB82 WEST12345698765432: the check of the account (letters as 10..35), then GB.
        assert_eq!(
            Check::Iso7064Mod97_10.of("32142829123456987654321611"),
            "82"
        );
        assert_eq!(
            Check::Luhn.of("INV-7992739871"),
            "3",
            "non-digits are skipped"
        );
    }

    #[test]
    fn names_read_back() {
        for check in [Check::Luhn, Check::Damm, Check::Iso7064Mod97_10] {
            assert_eq!(Check::parse(check.name()), Some(check));
        }
        assert_eq!(Check::parse("crc32"), None);
    }
}
