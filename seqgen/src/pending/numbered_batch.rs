//! One batch of the follower, inside its short transaction, written once for both kinds of
//! connection ([`Blocking`](crate::driver::Blocking) drives it on Diesel's, `NonBlocking` on
//! diesel-async's): the rows read with the key's row locked, grouped by counter, then
//! numbered and written. Each side opens and ends the transaction and finds the default
//! generator its own way (`pending/mod.rs`, `nonblocking/pending.rs`), only when a batch has
//! rows to number: a follower polling an idle key sends no query for it.

use std::sync::Mutex;

use chrono::NaiveDate;
use diesel_seqgen_core::{DocumentDate, Scoped, Spec};

use crate::backend::{Backend, Counter, PendingRow, PendingRows, SharedStatements};
use crate::driver::Driver;
use crate::engine::check_scope;
use crate::error::{Error, Result};
use crate::generator::Generator;

/// A batch's rows, read and grouped by counter, before they are numbered.
pub(crate) struct Read {
    groups: Vec<Group>,
    left: u64,
    read: usize,
    last: Option<i64>,
}

impl Read {
    /// Whether no row of the batch is to be numbered now.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The batch's outcome, `numbered` of its rows numbered.
    pub(crate) fn outcome(self, numbered: usize) -> Batch {
        Batch {
            numbered: numbered as u64,
            left: self.left,
            read: self.read,
            last: self.last,
        }
    }
}

/// Reads a batch of `rows` after the order value `after`, the key's row locked (created first
/// when missing), inside the caller's transaction.
pub(crate) async fn read_batch<D: Driver>(
    db: &mut D,
    spec: &Spec,
    rows: &PendingRows<'_>,
    after: i64,
) -> Result<Read> {
    let key = spec.key();
    let found = match D::Backend::select_pending(db, key, rows, after).await? {
        Some(found) => found,
        None => {
            D::Backend::create_row(db, Counter::key_row(key)).await?;
            D::Backend::select_pending(db, key, rows, after)
                .await?
                .unwrap_or_default()
        }
    };
    let read = found.len();
    let (groups, left, last) = group(spec, rows, found)?;
    Ok(Read {
        groups,
        left,
        read,
        last,
    })
}

/// Numbers `read`'s rows with `generator`'s gapless numbers (the key's row held: taken on
/// `db`, never on a pool) and writes them, inside the same transaction.
pub(crate) async fn write_batch<D: Driver>(
    db: &mut D,
    generator: &Generator,
    spec: &Spec,
    rows: &PendingRows<'_>,
    read: Read,
) -> Result<Batch> {
    let mut numbers = Vec::new();
    for group in &read.groups {
        let target = group.target(spec);
        let mut ids = Vec::with_capacity(group.orders.len());
        let emit = crate::engine::formatted(target, &mut ids);
        generator
            .engine()
            .take_holding_key(db, target, group.orders.len() as u64, emit)
            .await?;
        numbers.extend(group.orders.iter().copied().zip(ids));
    }
    if !numbers.is_empty() {
        if rolled_back_by_a_test(rows.table) {
            db.batch_execute("ROLLBACK").await?;
        }
        let written = D::Backend::write_pending(db, rows, &numbers).await?;
        all_written(spec, rows, numbers.len(), written)?;
    }
    Ok(read.outcome(numbers.len()))
}

/// The table whose next batch's transaction [`roll_back_before_writing`] ends.
static ROLL_BACK_BEFORE_WRITING: Mutex<Option<String>> = Mutex::new(None);

/// For seqgen's tests: the next batch numbering rows of `table` is rolled back between its
/// reservation and its write by a `ROLLBACK` Diesel does not see, as a Galera node's abort
/// that the client never hears of (it is reported to a statement's close, which has no reply).
/// No single server ends a transaction so; the write must then change nothing
/// (`suite/lost_batch.rs`).
#[doc(hidden)]
pub fn roll_back_before_writing(table: &str) {
    *ROLL_BACK_BEFORE_WRITING
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(table.to_owned());
}

/// Whether a test asked this batch of `table` to be rolled back (once).
fn rolled_back_by_a_test(table: &str) -> bool {
    let mut hooked = ROLL_BACK_BEFORE_WRITING
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let asked = hooked.as_deref() == Some(table);
    if asked {
        *hooked = None;
    }
    asked
}

/// One batch's outcome.
pub(crate) struct Batch {
    pub(crate) numbered: u64,
    pub(crate) left: u64,
    pub(crate) read: usize,
    pub(crate) last: Option<i64>,
}

/// Rows of one counter (a scope and a period), in order.
struct Group {
    scope: String,
    period: String,
    date: Option<NaiveDate>,
    orders: Vec<i64>,
}

impl Group {
    /// The spec's target for this group's numbers: its scope, and its date with one.
    fn target<'s>(&'s self, spec: &'s Spec) -> Scoped<'s> {
        let scoped = match self.scope.as_str() {
            "" => Scoped::from(spec),
            scope => spec.scope(scope),
        };
        match self.date {
            Some(date) => scoped.dated(date),
            None => scoped,
        }
    }
}

/// Whether the update wrote every row it took numbers for; else a refusal that rolls the
/// batch back (another writer numbered some of its rows meanwhile).
fn all_written(spec: &Spec, rows: &PendingRows<'_>, taken: usize, written: usize) -> Result<()> {
    if written == taken {
        return Ok(());
    }
    Err(Error::NumberedMeanwhile {
        key: spec.key().to_owned(),
        table: rows.table.to_owned(),
        taken,
        numbered: taken - written.min(taken),
    })
}

/// The rows of a batch by counter, in order of first appearance; how many are left for later;
/// the last order value read.
fn group(
    spec: &Spec,
    rows: &PendingRows<'_>,
    found: Vec<PendingRow>,
) -> Result<(Vec<Group>, u64, Option<i64>)> {
    let now = chrono::Utc::now();
    let mut groups: Vec<Group> = Vec::new();
    let mut left = 0;
    let mut last = None;
    for row in found {
        let order = row
            .order_key
            .trim()
            .parse::<i64>()
            .map_err(|_| Error::Refused {
                key: spec.key().to_owned(),
                reason: format!(
                    "column {} of {} holds {:?}: the order column must hold integers",
                    rows.order_by, rows.table, row.order_key
                ),
            })?;
        last = Some(order);
        let scope = match (&row.scope, spec.is_scoped()) {
            (Some(scope), true) if check_scope(spec, scope).is_ok() => scope.clone(),
            (_, true) => {
                left += 1;
                continue;
            }
            (_, false) => String::new(),
        };
        let date = match (rows.date_column, row.day.as_deref().and_then(day)) {
            (None, _) => None,
            (Some(_), Some(date)) if !spec.too_far_ahead(DocumentDate::Day(date), now) => {
                Some(date)
            }
            (Some(_), _) => {
                left += 1;
                continue;
            }
        };
        let period = date
            .map(|d| spec.period_on(DocumentDate::Day(d)))
            .unwrap_or_default();
        match groups
            .iter_mut()
            .find(|g| g.scope == scope && g.period == period)
        {
            Some(group) => group.orders.push(order),
            None => groups.push(Group {
                scope,
                period,
                date,
                orders: vec![order],
            }),
        }
    }
    Ok((groups, left, last))
}

/// The calendar day a date column holds, as text (`2026-03-31`, `2026-03-31 12:00:00`, …).
fn day(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.get(..10)?, "%Y-%m-%d").ok()
}
