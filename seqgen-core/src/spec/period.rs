//! What a generator keys its blocks by, and the period an ID is stamped with.

/// Names a block in a generator: key, date pattern, time zone, shape and start, length-prefixed
/// so that no two different sets give the same text, with its hash computed once when the spec
/// is built. The shape is part of it so that a spec of another shape on a key never shares the
/// block of the spec the key is served with: it reserves its own, and the key row refuses it
/// (`Error::ShapeChanged`) before any number is handed out. The start, so that a spec starting
/// higher never serves numbers below its start from another spec's block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CacheKey {
    hash: u64,
    text: Box<str>,
}

impl CacheKey {
    pub(super) fn new(spec: &super::Spec) -> Self {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let (key, date, tz, shape) = (spec.key(), spec.date(), spec.time_zone(), spec.shape());
        let text: Box<str> = format!(
            "{}:{key}{}:{date}{tz:?}{}:{shape}{}",
            key.len(),
            date.len(),
            shape.len(),
            spec.start(),
        )
        .into();
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(&text);
        CacheKey { hash, text }
    }
}

impl std::hash::Hash for CacheKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// A hasher that passes on the hash a [`CacheKey`] already carries.
#[derive(Default)]
pub struct PrehashedHasher(u64);

impl std::hash::Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is ever called; fold anything else in, to stay a correct hasher.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A period: the formatted date part, and its value as a number when it is digits only
/// (computed once per period, not once per ID).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    /// The formatted date part.
    pub text: String,
    pub(super) number: Option<i64>,
    /// The period of the counter it draws from, where a [reset](super::Reset) makes it other
    /// than `text`.
    counter: Option<Box<str>>,
}

impl Default for Period {
    /// The empty period (specs without a date part), with its number.
    fn default() -> Self {
        Period::new(String::new())
    }
}

impl Period {
    /// A period from its formatted date part.
    pub fn new(text: String) -> Self {
        let number = if text.is_empty() {
            Some(0)
        } else if text.bytes().all(|b| b.is_ascii_digit()) {
            text.parse().ok()
        } else {
            None
        };
        Period {
            text,
            number,
            counter: None,
        }
    }

    /// A period drawing from the counter of period `counter` (`None`: its own).
    pub(super) fn with_counter(text: String, counter: Option<Box<str>>) -> Self {
        Period {
            counter,
            ..Period::new(text)
        }
    }

    /// The `db_key` period of the counter its IDs draw from ([`Spec::counter_period`](super::Spec::counter_period)).
    pub fn counter(&self) -> &str {
        self.counter.as_deref().unwrap_or(&self.text)
    }
}
