//! The backends whose diesel-async connections seqgen runs on.

use super::Backend;

/// A [`Backend`] whose diesel-async connections seqgen runs on (the `async-*` features): its
/// statements are the same code as on Diesel's connections, run by the async driver.
///
/// Sealed; its items are seqgen's internals.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "diesel-seqgen was built without diesel-async's `{Self}` connections",
    label = "a diesel-async connection to `{Self}`",
    note = "turn on diesel-seqgen's `async-sqlite`, `async-postgres` or `async-mysql` feature for it"
)]
pub trait AsyncBackend: Backend {}

#[cfg(feature = "async-sqlite")]
impl AsyncBackend for diesel::sqlite::Sqlite {}

#[cfg(feature = "async-postgres")]
impl AsyncBackend for diesel::pg::Pg {}

#[cfg(feature = "async-mysql")]
impl AsyncBackend for diesel::mysql::Mysql {}
