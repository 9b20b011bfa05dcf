//! Obfuscated numbers on a spec: where the key comes from, and which range each counter is
//! permuted in (`obfuscate.rs` does the permuting).

use std::fmt;

use super::{Spec, SpecBuilder};
use crate::error::SpecError;
use crate::obfuscate::Obfuscation;
use crate::policy::{self, Overflow};

/// Where [`SpecBuilder::build`] takes the key of obfuscated numbers from.
#[derive(Clone)]
pub(crate) enum KeySource {
    Key(Vec<u8>),
    Env(String),
}

impl KeySource {
    pub(super) fn resolve(&self) -> Result<Obfuscation, SpecError> {
        // Without the feature, say so before asking for a key that could not be used.
        if cfg!(not(feature = "obfuscate")) {
            return Obfuscation::new(&[]);
        }
        match self {
            KeySource::Key(key) => Obfuscation::new(key),
            KeySource::Env(var) => match std::env::var(var) {
                Ok(key) if !key.is_empty() => {
                    Obfuscation::new(key.as_bytes()).map_err(|e| match e {
                        SpecError::ObfuscationKey(reason) => {
                            SpecError::ObfuscationKey(format!("{var}: {reason}"))
                        }
                        e => e,
                    })
                }
                _ => Err(SpecError::ObfuscationKey(format!(
                    "the environment variable {var} that holds the key is not set: set it to the \
                     key every instance of this key uses (e.g. `openssl rand -hex 32`)"
                ))),
            },
        }
    }
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Key(_) => f.write_str("Key(..)"),
            KeySource::Env(var) => write!(f, "Env({var:?})"),
        }
    }
}

impl SpecBuilder {
    /// Shows each period's numbers in an order only `key` knows (the `obfuscate` feature;
    /// [`SpecError::FeatureOff`] without it): the n-th ID of a period holds
    /// the image of n under a keyed permutation of the numbers the pad can show (past them,
    /// with `widen` or `letters`, of the next range), so that two IDs a month apart do not tell
    /// how many were handed out between them. IDs stay unique, keep their width and parse back
    /// to n with the key ([`Spec::parse`], [`Spec::counter_of`]); `db_key`, the void ledger and
    /// gap reports keep counting n. Works with every mode, scopes, check characters and
    /// overflow policy.
    ///
    /// `key` (at least 16 bytes; a random one: `openssl rand -hex 32`) comes from where the
    /// app keeps its secrets, never from source code; every instance of the key must use the
    /// same. The shape recorded on the key's row holds a fingerprint of it (32 bits of an
    /// HMAC), so that a generator given another key is refused
    /// ([`ShapeChanged`](https://docs.rs/diesel-seqgen/latest/diesel_seqgen/enum.Error.html#variant.ShapeChanged))
    /// rather than hand out other IDs for the same numbers. See also
    /// [`obfuscate_from_env`](Self::obfuscate_from_env).
    ///
    /// ```
    /// # #[cfg(feature = "obfuscate")] {
    /// use diesel_seqgen_core::Spec;
    ///
    /// let key = b"an example key, of 32 bytes long";
    /// let orders = Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).obfuscate(key).build()?;
    /// let first = orders.format("2611", 1);
    /// assert_eq!(first.len(), "ORD26110001".len());
    /// assert_ne!(first, "ORD26110001");
    /// assert_eq!(orders.counter_of(&orders.parse(&first)?), Some(1));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn obfuscate(mut self, key: impl AsRef<[u8]>) -> Self {
        self.obfuscate = Some(KeySource::Key(key.as_ref().to_vec()));
        self
    }

    /// [`obfuscate`](Self::obfuscate) with the key the environment variable `var` holds when
    /// the spec is built: `#[distributed_id(obfuscate = "ORDER_NUMBER_KEY")]`. A missing or
    /// short key fails the build with [`SpecError::ObfuscationKey`], never other IDs.
    pub fn obfuscate_from_env(mut self, var: impl Into<String>) -> Self {
        self.obfuscate = Some(KeySource::Env(var.into()));
        self
    }
}

impl Spec {
    /// Whether the spec's numbers are obfuscated ([`SpecBuilder::obfuscate`]).
    pub fn is_obfuscated(&self) -> bool {
        self.obfuscation.is_some()
    }

    /// What the shape's `{seq}` adds for obfuscated numbers: the key's fingerprint.
    pub(super) fn obfuscated_shape(&self) -> String {
        self.obfuscation
            .as_ref()
            .map_or_else(String::new, |o| format!(",obfuscated={}", o.fingerprint()))
    }

    /// How many values a period's first numbers are permuted among when the spec is
    /// obfuscated (`10^pad - 1`, or the numbers its series or one cycle hold); `None`
    /// otherwise. Below [`OBFUSCATION_FLOOR`](crate::OBFUSCATION_FLOOR) the permutation hides
    /// volume from a casual reader only (see the guide's "Numbers that do not reveal volume").
    pub fn obfuscation_domain(&self) -> Option<u64> {
        self.obfuscation.as_ref()?;
        let (lo, hi) = self.range_of(1)?;
        Some(hi - lo + 1)
    }

    /// The number counter `counter` of `period` shows: itself, or its image when obfuscated.
    /// Inlined into every cached ID (a test of one field); the permuting is out of line.
    #[inline]
    pub(crate) fn obfuscated(&self, period: &str, counter: u64) -> u64 {
        match &self.obfuscation {
            None => counter,
            Some(obfuscation) => self.permuted(obfuscation, period, counter),
        }
    }

    #[inline(never)]
    fn permuted(&self, obfuscation: &Obfuscation, period: &str, counter: u64) -> u64 {
        let counter = match self.overflow {
            // Its IDs repeat anyway: the shown number is permuted within one cycle.
            Overflow::Cycle { max } if counter > 0 => (counter - 1) % max + 1,
            _ => counter,
        };
        match self.range_of(counter) {
            Some((lo, hi)) => obfuscation.permute(period, lo, hi, counter),
            None => counter,
        }
    }

    /// The counter whose ID of `period` shows `shown`: the inverse of [`obfuscated`](Self::obfuscated).
    pub(crate) fn revealed(&self, period: &str, shown: u64) -> Option<u64> {
        let Some(obfuscation) = &self.obfuscation else {
            return Some(shown);
        };
        let (lo, hi) = self.range_of(shown)?;
        Some(obfuscation.unpermute(period, lo, hi, shown))
    }

    /// The range a counter is permuted within: the numbers the pad shows (or the series, or
    /// one cycle hold), then with `widen` each further number of digits, with `letters` the
    /// lettered ones. `None` for 0 and past the capacity, which no ID shows.
    fn range_of(&self, counter: u64) -> Option<(u64, u64)> {
        if counter == 0 {
            return None;
        }
        let padded = policy::pow10(self.pad) - 1;
        match self.overflow {
            Overflow::Cycle { max } => (counter <= max).then_some((1, max)),
            _ if self.series.is_some() => (counter <= self.capacity).then_some((1, self.capacity)),
            _ if counter <= padded => Some((1, padded)),
            Overflow::Widen => {
                let digits = counter.ilog10() + 1;
                let hi = 10u64.checked_pow(digits).map_or(u64::MAX, |p| p - 1);
                Some((policy::pow10(digits - 1), hi))
            }
            Overflow::Letters => (counter <= self.capacity).then_some((padded + 1, self.capacity)),
            _ => None,
        }
    }
}
