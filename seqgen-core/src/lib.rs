//! What an ID of [`diesel-seqgen`](https://docs.rs/diesel-seqgen) looks like, without a database: the
//! [`Spec`] and its [builder](SpecBuilder), overflow [policies](Overflow), [series](Series),
//! templates, date patterns, [time zones](TimeZone), formatting and parsing.
//!
//! `diesel-seqgen` (the runtime) and `diesel-seqgen-derive` (compile-time checks of
//! `#[derive(DistributedId)]`) both build specs here, so every rule of a spec exists once:
//! a [`SpecError`] is an error at run time and, in the derive, a compile error at the token
//! of the setting it names. Use this crate through `diesel-seqgen`, which re-exports it.
//!
//! ```
//! use diesel_seqgen_core::Spec;
//!
//! let spec = Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).build()?;
//! assert_eq!(spec.format("2507", 1), "ORD25070001");
//! # Ok::<(), diesel_seqgen_core::SpecError>(())
//! ```
//!
//! ## Features
//!
//! Settings that need a large or extra crate are features, off by default (`diesel-seqgen`
//! forwards them under the same names). A spec that uses one without it is refused with
//! [`SpecError::FeatureOff`], and `#[derive(DistributedId)]` says so at the attribute.
//!
#![doc = document_features::document_features!()]
#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly): every feature-gated item labelled with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod check;
mod date_pattern;
mod error;
mod obfuscate;
mod parse;
mod policy;
mod spec;
mod template;
mod widths;
mod zone;

pub use check::Check;
pub use error::{Setting, SpecError};
pub use obfuscate::{FLOOR as OBFUSCATION_FLOOR, MIN_KEY_LEN as MIN_OBFUSCATION_KEY_LEN};
pub use parse::{IdParts, ParseIdError};
pub use policy::{Overflow, Series};
pub use spec::{
    DocumentDate, FiscalYear, Mode, Reset, Scoped, Spec, SpecBuilder, DEFAULT_MAX_DAYS_AHEAD,
    MAX_KEY_LEN, MAX_PAD,
};
pub use zone::TimeZone;

/// Items the `diesel-seqgen` runtime needs from a spec; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::spec::{CacheKey, Memo, Period, PrehashedHasher};
}
