//! Gapless numbers given after the commit: a row commits with no number (NULL), and seqgen
//! numbers committed rows afterwards, in short transactions of its own, in the order it finds
//! them committed. No business transaction holds the counter's lock, so none waits for
//! another's commit; the number comes a moment later. See [`guide::gapless`](crate::guide::gapless)
//! for when to choose it.
//!
//! [`number_pending`] numbers every row waiting now; [`follow`] keeps doing so until told to
//! stop (on PostgreSQL woken by `LISTEN`, see [`notify_on_commit`]); [`spawn_follower`] runs it
//! on a thread of its own; `seqgen number --follow` is the same as a sidecar process.
//!
//! The promises, per period (and scope): committed rows get exactly 1..N, no hole, no number
//! twice; a row rolled back never gets one; followers of one key (threads or processes) take
//! turns on the key's `db_key` row, and each batch is one transaction: a follower killed
//! midway leaves its batch unnumbered, for the next.
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_seqgen::pending::{self, PendingRows};
//!
//! diesel::table! { invoices (id) { id -> Integer, number -> Nullable<Text>, total -> Integer } }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! diesel::sql_query("CREATE TABLE invoices (id INTEGER PRIMARY KEY, number TEXT UNIQUE, total INTEGER)")
//!     .execute(&mut conn)?;
//! // The business transactions insert their rows without a number, and take no lock of seqgen's.
//! diesel::sql_query("INSERT INTO invoices (total) VALUES (10), (20), (30)").execute(&mut conn)?;
//!
//! let spec = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").pad(4).gapless().build()?;
//! let rows = PendingRows::of(invoices::number, invoices::id);
//! assert_eq!(pending::number_pending(&mut conn, &spec, rows)?.rows, 3);
//!
//! let numbers: Vec<Option<String>> =
//!     invoices::table.select(invoices::number).order(invoices::id).load(&mut conn)?;
//! assert_eq!(numbers, [Some("INV0001".into()), Some("INV0002".into()), Some("INV0003".into())]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod follow;
mod numbered_batch;
mod of_model;

pub use crate::backend::PendingRows;
pub use follow::{follow, keep_following, spawn_follower, FollowConnection, FollowEvent, Follower};
#[cfg(feature = "postgres")]
pub use follow::{notify_on_commit, CHANNEL};
pub use of_model::{rows_of, rows_of_column};

use diesel_seqgen_core::{Mode, Spec};

use crate::backend::{Backend, IdConnection, SharedStatements};
use crate::driver::{drive, Blocking};
use crate::error::{Error, Result};
use crate::global::default_generator;
#[doc(hidden)]
pub use numbered_batch::roll_back_before_writing;
pub(crate) use numbered_batch::{read_batch, write_batch, Batch};

/// What [`number_pending`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Numbered {
    /// Rows it numbered.
    pub rows: u64,
    /// Rows it left without a number, to be numbered later: dated further ahead of the clock
    /// than the spec allows, or (scoped spec) without a valid scope.
    pub left: u64,
}

/// How many committed rows wait for their number: what a monitor of followers reads
/// ([`waiting`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Waiting {
    /// Rows without a number.
    pub rows: u64,
    /// The lowest order value among them; `None` without any.
    pub oldest: Option<i64>,
    /// The highest order value of the table, numbered or not; `None` in an empty table.
    pub newest: Option<i64>,
}

/// How many committed rows of `rows` have no number yet, the order value of the oldest of
/// them and the highest of the table: what `seqgen metrics --pending` reports, so that a
/// follower that stopped or lags is seen. A plain read: it waits for no lock.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::pending::{self, PendingRows};
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel::sql_query("CREATE TABLE invoices (id INTEGER PRIMARY KEY, number TEXT)").execute(&mut conn)?;
/// diesel::sql_query("INSERT INTO invoices (number) VALUES ('INV0001'), (NULL), (NULL)").execute(&mut conn)?;
/// let waiting = pending::waiting(&mut conn, PendingRows::new("invoices", "number", "id"))?;
/// assert_eq!((waiting.rows, waiting.oldest, waiting.newest), (2, Some(2), Some(3)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn waiting<C: IdConnection>(conn: &mut C, rows: PendingRows<'_>) -> Result<Waiting> {
    let found = drive(C::Backend::waiting_rows(&mut Blocking(conn), &rows))?;
    let order = |text: Option<String>| -> Result<Option<i64>> {
        text.map(|text| {
            text.trim().parse().map_err(|_| Error::Refused {
                key: rows.table.to_owned(),
                reason: format!(
                    "column {} of {} holds {text:?}: the order column must hold integers",
                    rows.order_by, rows.table
                ),
            })
        })
        .transpose()
    };
    Ok(Waiting {
        rows: found.waiting.max(0) as u64,
        oldest: order(found.oldest)?,
        newest: order(found.newest)?,
    })
}

/// Numbers every committed row of `rows` that has no number yet, with `spec`'s gapless
/// numbers, a batch per short transaction, in the order of `rows`' order column; returns how
/// many. Rows committed meanwhile with an order value below the last one read wait for the
/// next call. `spec` must be gapless; a scoped spec needs [`PendingRows::scoped_by`].
///
/// Fails with [`Error::NumberedMeanwhile`] (nothing written) when another writer numbered
/// some of the batch's rows meanwhile: call it again.
pub fn number_pending<C>(conn: &mut C, spec: &Spec, rows: PendingRows<'_>) -> Result<Numbered>
where
    C: IdConnection,
{
    check(spec, &rows)?;
    let mut done = Numbered::default();
    let mut after = i64::MIN;
    loop {
        let batch = number_batch(conn, spec, &rows, after)?;
        done.rows += batch.numbered;
        done.left += batch.left;
        match batch.last {
            Some(last) if batch.read >= rows.batch => after = last,
            _ => return Ok(done),
        }
    }
}

/// A spec and rows [`number_pending`] can work with.
pub(crate) fn check(spec: &Spec, rows: &PendingRows<'_>) -> Result<()> {
    let refuse = |reason: &str| {
        Err(Error::Refused {
            key: spec.key().to_owned(),
            reason: reason.to_owned(),
        })
    };
    if !matches!(spec.mode(), Mode::Gapless { .. }) {
        return refuse(
            "numbers given after the commit are gapless: build the spec with `.gapless()`",
        );
    }
    if spec.is_scoped() != rows.scope_column.is_some() {
        return refuse(if spec.is_scoped() {
            "the spec is scoped: name the rows' scope column with `PendingRows::scoped_by`"
        } else {
            "the spec is not scoped: a scope column has no counter to go to"
        });
    }
    Ok(())
}

/// One short transaction: the key's row locked, a batch of rows read, numbered and written.
fn number_batch<C>(conn: &mut C, spec: &Spec, rows: &PendingRows<'_>, after: i64) -> Result<Batch>
where
    C: IdConnection,
{
    drive(C::Backend::read_committed_next(&mut Blocking(conn)))?;
    conn.transaction(|conn| {
        C::Backend::lock_for_writing(conn)?;
        let read = drive(read_batch(&mut Blocking(conn), spec, rows, after))?;
        if read.is_empty() {
            return Ok(read.outcome(0));
        }
        let generator = default_generator(conn)?;
        drive(write_batch(
            &mut Blocking(conn),
            &generator,
            spec,
            rows,
            read,
        ))
    })
}
