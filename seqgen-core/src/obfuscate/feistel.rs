//! The keyed permutation itself (the `obfuscate` feature): see the parent module.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::MIN_KEY_LEN;
use crate::error::SpecError;

const ROUNDS: u8 = 8;

/// A key for obfuscated numbers ([`SpecBuilder::obfuscate`](crate::SpecBuilder::obfuscate)).
/// Its `Debug` shows only its fingerprint.
#[derive(Clone)]
pub(crate) struct Obfuscation {
    mac: Hmac<Sha256>,
    /// Names the key in the spec's shape, so that a generator given another key is refused
    /// rather than handing out other IDs for the same numbers. 32 bits of an HMAC: it does
    /// not reveal the key.
    fingerprint: String,
}

impl Obfuscation {
    pub(crate) fn new(key: &[u8]) -> Result<Self, SpecError> {
        if key.len() < MIN_KEY_LEN {
            return Err(SpecError::ObfuscationKey(format!(
                "the key has {} bytes, fewer than {MIN_KEY_LEN}: use a random one, e.g. `openssl rand -hex 32`",
                key.len()
            )));
        }
        let mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
        let mut named = mac.clone();
        named.update(b"seqgen fingerprint");
        let digest = named.finalize().into_bytes();
        let fingerprint = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        Ok(Obfuscation { mac, fingerprint })
    }

    pub(crate) fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The image of `n` in `lo..=hi` (`n` in it), in `period`.
    pub(crate) fn permute(&self, period: &str, lo: u64, hi: u64, n: u64) -> u64 {
        self.walk(period, lo, hi, n, Direction::Forward)
    }

    /// The `n` whose image [`permute`](Self::permute) gives `image`.
    pub(crate) fn unpermute(&self, period: &str, lo: u64, hi: u64, image: u64) -> u64 {
        self.walk(period, lo, hi, image, Direction::Backward)
    }

    fn walk(&self, period: &str, lo: u64, hi: u64, n: u64, direction: Direction) -> u64 {
        let size = hi - lo + 1; // callers keep lo <= n <= hi
        if size < 2 {
            return n;
        }
        let bits = 64 - (size - 1).leading_zeros();
        let half = bits.div_ceil(2);
        let feistel = Feistel {
            obfuscation: self,
            period,
            lo,
            size,
            half,
        };
        // Cycle walking: the values of `0..size` form cycles under the permutation of
        // `0..2^(2*half)`; following one from inside the range reaches the range again.
        let mut x = n - lo;
        loop {
            x = match direction {
                Direction::Forward => feistel.encrypt(x),
                Direction::Backward => feistel.decrypt(x),
            };
            if x < size {
                return lo + x;
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Forward,
    Backward,
}

/// One permutation of `0..2^(2*half)`, for one period and range.
struct Feistel<'a> {
    obfuscation: &'a Obfuscation,
    period: &'a str,
    lo: u64,
    size: u64,
    half: u32,
}

impl Feistel<'_> {
    fn mask(&self) -> u64 {
        (1u64 << self.half) - 1
    }

    fn round(&self, round: u8, value: u64) -> u64 {
        let mut mac = self.obfuscation.mac.clone();
        mac.update(&[round]);
        mac.update(&self.lo.to_be_bytes());
        mac.update(&self.size.to_be_bytes());
        mac.update(&value.to_be_bytes());
        mac.update(self.period.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut word = [0u8; 8];
        word.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(word) & self.mask()
    }

    fn encrypt(&self, x: u64) -> u64 {
        let (mut left, mut right) = (x >> self.half, x & self.mask());
        for round in 0..ROUNDS {
            (left, right) = (right, left ^ self.round(round, right));
        }
        (left << self.half) | right
    }

    fn decrypt(&self, x: u64) -> u64 {
        let (mut left, mut right) = (x >> self.half, x & self.mask());
        for round in (0..ROUNDS).rev() {
            (left, right) = (right ^ self.round(round, left), left);
        }
        (left << self.half) | right
    }
}

impl fmt::Debug for Obfuscation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Obfuscation({})", self.fingerprint)
    }
}

impl PartialEq for Obfuscation {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl Eq for Obfuscation {}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Obfuscation {
        Obfuscation::new(b"0123456789abcdef0123456789abcdef").unwrap()
    }

    #[test]
    fn a_permutation_of_every_range_and_back() {
        let o = key();
        for (lo, hi) in [(1, 9), (1, 999), (1000, 9999), (1, 2), (5, 5), (1, 1000)] {
            let images: Vec<u64> = (lo..=hi).map(|n| o.permute("2611", lo, hi, n)).collect();
            let mut sorted = images.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (lo..=hi).collect::<Vec<_>>(), "{lo}..={hi}");
            for (n, &image) in (lo..=hi).zip(&images) {
                assert_eq!(o.unpermute("2611", lo, hi, image), n);
            }
        }
    }

    #[test]
    fn periods_and_keys_permute_differently() {
        let o = key();
        let other = Obfuscation::new(b"another key of 32 bytes, really!").unwrap();
        let first: Vec<u64> = (1..=20).map(|n| o.permute("2611", 1, 999, n)).collect();
        let next_month: Vec<u64> = (1..=20).map(|n| o.permute("2612", 1, 999, n)).collect();
        let other_key: Vec<u64> = (1..=20).map(|n| other.permute("2611", 1, 999, n)).collect();
        assert_ne!(first, next_month);
        assert_ne!(first, other_key);
        assert_ne!(o.fingerprint(), other.fingerprint());
    }

    #[test]
    fn a_short_key_is_refused() {
        let err = Obfuscation::new(b"secret").unwrap_err();
        assert!(err.to_string().contains("6 bytes"), "{err}");
    }
}
