//! Tracing, with the `tracing` feature: a span per reservation, events for what an operator
//! should know. Without the feature all of it compiles to nothing.
//!
//! Levels: reservations and their retries are `debug` (a healthy app makes about one a second
//! per busy key); a period's end that leaves numbers unused is `debug` too (it is expected);
//! a reservation ahead that failed is `warn` (the foreground reserves instead); a counter that
//! went back and a refused shape are `error`-worthy states the caller also gets as errors, so
//! they are `warn` here, for the operator. `info` stays quiet in a healthy app.

/// The span of one reservation, open until [`took`](ReservationSpan::took) or dropped. Not
/// entered: a reservation may await, and an entered span must not be held across an await
/// (it would wrap whatever else the thread runs meanwhile).
pub(crate) struct ReservationSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

impl ReservationSpan {
    /// Opens the span of a reservation of `key` in `period` on `backend`, made `how`
    /// (`"foreground"`, `"ahead"`, `"in transaction"`, `"gapless"`).
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub(crate) fn start(key: &str, period: &str, backend: &'static str, how: &'static str) -> Self {
        ReservationSpan {
            #[cfg(feature = "tracing")]
            span: tracing::debug_span!(
                target: TARGET,
                "reserve",
                key,
                period,
                backend,
                how,
                count = tracing::field::Empty,
            ),
        }
    }

    /// Records how many numbers the reservation took, and ends its span. (A reservation that
    /// fails ends its span when it is dropped, without a count.)
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub(crate) fn took(self, count: u64) {
        #[cfg(feature = "tracing")]
        self.span.record("count", count);
    }
}

/// The target of every span and event: the crate's path, which `RUST_LOG=diesel_seqgen=debug`
/// (tracing-subscriber's `EnvFilter`) selects, as it does any crate's.
#[cfg(feature = "tracing")]
pub(crate) const TARGET: &str = "diesel_seqgen";

/// An event at `$level` (`debug`, `warn`, ...) with `tracing`'s field syntax, target
/// [`TARGET`]; nothing without the feature (its arguments are not evaluated then).
macro_rules! event {
    ($level:ident, $($arg:tt)+) => {
        #[cfg(feature = "tracing")]
        tracing::$level!(target: $crate::trace::TARGET, $($arg)+);
    };
}
pub(crate) use event;
