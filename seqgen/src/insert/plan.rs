//! Which statements an insert sends, decided in one place from what the call shows: the
//! backend, the connection's form, the mode of the model's ID fields and whose generator. The
//! blocking insert (`insert/mod.rs`) and the async one (`nonblocking/insert/`) both follow
//! [`plan`]; the guide's "Which statements an insert sends" (`guide::backends`) is this table
//! for users.
//!
//! | backend | connection | ID fields | generator | rows | the insert sends |
//! |---|---|---|---|---|---|
//! | PostgreSQL | any | one, gapless, undated, unset | any | any | [`Plan::Numbered`]: one `INSERT … WITH` that advances the counter and numbers its rows |
//! | PostgreSQL | plain | batched | default | any | [`Plan::OnAGuess`]: the checking insert (`backend/asserted.rs`), no query before it |
//! | MySQL | plain | batched | default | one | [`Plan::OnAGuess`], as on PostgreSQL |
//! | MySQL | plain | batched | default | several | [`Plan::OnAGuess`]: a check of the session's mark, then the insert |
//! | every other | | | | | [`Plan::Filled`]: a reservation when the cache is empty, then the insert |
//!
//! "Plain": a connection that cannot remember its database (`&mut PgConnection`, `&mut *pooled`,
//! every diesel-async connection); r2d2's `PooledConnection` passed as it comes remembers it.
//! On SQLite telling the database apart is a local read: there every insert is
//! [`Plan::Filled`].
//!
//! What each plan falls back to, and when:
//!
//! - [`Plan::Numbered`] on a key whose shape this process has not checked yet (its first
//!   insert, or the first after a failover): [`Plan::Filled`], which checks it.
//! - [`Plan::OnAGuess`] without a guess (the connection's first insert, or one of a type whose
//!   connections reach several databases), or after a wrong one (the checking insert inserted
//!   nothing): one query identifies the database and marks the session, then [`Plan::Filled`].
//!   So does a row the checking insert cannot carry, refused before anything is sent: a model
//!   whose row the derive does not write (no `#[diesel(table_name)]`, an `embed`ded field), or
//!   an `Option` field `None` that Diesel writes as `DEFAULT`.
//!   A guess is the database last seen at the connection's address, else the one every
//!   connection of its type reached; an address that missed three times in a row is no longer
//!   guessed from.
//! - [`Plan::Filled`]'s insert is the one seqgen writes and keeps prepared (`asserted.rs`
//!   without a mark) on PostgreSQL and MySQL when the derive writes the model's row, else
//!   Diesel's own; with a gapless field both run in a savepoint.
//!
//! A bulk on MySQL checks the guess with a statement of its own (`SELECT @seqgen_identity = ?`,
//! on the session that then inserts): an insert of several rows that inserts nothing on
//! another database would be a derived table of them, spelled differently by MySQL and MariaDB
//! and dearer. The check costs those bulks about a tenth of their rate; telling the database
//! apart with a query instead cost a third (`BENCHMARKS.md`, "The statement layer and the
//! insert's plan").

use crate::backend::Backend;
use crate::global::guess::worth_guessing;
use crate::model::numbering;
use crate::model::DistributedId;

/// What an insert sends; see the module's table.
pub(crate) enum Plan {
    /// PostgreSQL's gapless insert that numbers its own rows (`model/numbering.rs`).
    Numbered(numbering::Field),
    /// The default generator's insert on a guessed database, checked by the statement itself
    /// (`global/guess.rs`, `backend/asserted.rs`).
    OnAGuess,
    /// Fill the ID fields (reserving when the cache is empty), then insert.
    Filled,
}

/// The plan of an insert of `rows` on backend `B`: `own_generator` when the caller named a
/// generator (`with_generator`), `remembers` when the connection remembers its database.
pub(crate) fn plan<B: Backend, T: DistributedId>(
    rows: &mut [T],
    own_generator: bool,
    remembers: impl FnOnce() -> bool,
) -> Plan {
    if let Some(field) = numbering::field_of::<B, _>(rows) {
        return Plan::Numbered(field);
    }
    if worth_guessing::<B, _>(rows, own_generator) && !remembers() {
        return Plan::OnAGuess;
    }
    Plan::Filled
}
