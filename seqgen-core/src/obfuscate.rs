//! Numbers that do not reveal volume: within each period, the n-th number is shown as the
//! image of n under a keyed permutation of its range, so IDs stay unique, keep their width
//! and parse back to n with the key, but consecutive IDs are not consecutive numbers.
//!
//! The permutation is a Feistel network (8 rounds of HMAC-SHA-256, tweaked by the period and
//! the range) over the smallest even number of bits that covers the range, with cycle
//! walking: a value that falls outside the range is permuted again until it lands inside.
//! The range is at most 4 times smaller than the bits, so a number takes about 4 walks at
//! worst, 1–2 usually.
//!
//! HMAC and SHA-256 are the `obfuscate` feature; without it, a spec asking for obfuscated
//! numbers is refused ([`SpecError::FeatureOff`]) and no [`Obfuscation`] can exist.

#[cfg(feature = "obfuscate")]
mod feistel;

#[cfg(feature = "obfuscate")]
pub(crate) use feistel::Obfuscation;

#[cfg(not(feature = "obfuscate"))]
use crate::error::{Setting, SpecError};

/// The shortest key accepted, in bytes: 128 bits, so that the permutation cannot be
/// guessed by trying keys.
pub const MIN_KEY_LEN: usize = 16;

/// The smallest domain (values a period's numbers are permuted among) that NIST SP 800-38G
/// rev. 1 accepts for format-preserving encryption, 10^6, less the zero seqgen never shows: a
/// pad of 6 digits. Smaller domains are allowed, and warned about by the runtime.
pub const FLOOR: u64 = 999_999;

/// Without the feature: a type with no value (`Infallible`), so that every use of an
/// obfuscation compiles and none can run.
#[cfg(not(feature = "obfuscate"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Obfuscation(std::convert::Infallible);

#[cfg(not(feature = "obfuscate"))]
impl Obfuscation {
    pub(crate) fn new(_key: &[u8]) -> Result<Self, SpecError> {
        Err(SpecError::FeatureOff {
            setting: Setting::Obfuscate,
            feature: "obfuscate",
        })
    }

    pub(crate) fn fingerprint(&self) -> &str {
        match self.0 {}
    }

    pub(crate) fn permute(&self, _period: &str, _lo: u64, _hi: u64, _n: u64) -> u64 {
        match self.0 {}
    }

    pub(crate) fn unpermute(&self, _period: &str, _lo: u64, _hi: u64, _image: u64) -> u64 {
        match self.0 {}
    }
}
