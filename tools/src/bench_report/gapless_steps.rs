//! What the gapless comparisons of both servers (`gapless.rs`, `gapless_mysql.rs`) share: the
//! load (workers, rollbacks), one worker's step, the per-round ratio and the check that the
//! committed rows are numbered without a hole.

use std::sync::atomic::{AtomicU64, Ordering};

use diesel::result::Error as DieselError;
use diesel::Connection;

use super::inserts::spread;
use super::BoxError;

pub(super) const WORKERS: usize = 8;
/// One transaction in this many rolls back (the Django script does the same).
pub(super) const ROLLBACK_EVERY: u64 = 10;

/// How one worker's step takes its number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Form {
    /// `insert` inside a transaction of the caller's.
    InTransaction,
    /// `insert` alone, its own transaction; the tenth step is still a transaction rolled back.
    Alone,
}

/// One worker's step: `insert` in the `form` given, one step in [`ROLLBACK_EVERY`] rolled back
/// (counted by `attempts`); `committed` counts the rest.
pub(super) fn step<C, E>(
    conn: &mut C,
    form: Form,
    attempts: &AtomicU64,
    committed: &AtomicU64,
    insert: impl Fn(&mut C) -> Result<(), E>,
) -> Result<u64, BoxError>
where
    C: Connection,
    E: From<DieselError> + Into<BoxError>,
{
    let roll_back = attempts.fetch_add(1, Ordering::Relaxed) % ROLLBACK_EVERY == ROLLBACK_EVERY - 1;
    if form == Form::Alone && !roll_back {
        insert(conn).map_err(Into::into)?;
        committed.fetch_add(1, Ordering::Relaxed);
        return Ok(1);
    }
    let mut rolled_back = false;
    let result = conn.transaction(|conn| {
        insert(conn)?;
        if roll_back {
            rolled_back = true;
            return Err(E::from(DieselError::RollbackTransaction));
        }
        Ok(())
    });
    match result {
        Ok(()) => {
            committed.fetch_add(1, Ordering::Relaxed);
        }
        Err(_) if rolled_back => {}
        Err(e) => return Err(e.into()),
    }
    Ok(1)
}

/// `rates` over `baseline`, per round (a round the machine slowed down compares like with
/// like): median (range), or nothing without rounds.
pub(super) fn ratio(rates: &[f64], baseline: &[f64]) -> String {
    let ratios: Vec<f64> = rates.iter().zip(baseline).map(|(s, o)| s / o).collect();
    if ratios.is_empty() {
        return String::new();
    }
    let (lo, mid, hi) = spread(&ratios);
    format!("{mid:.2} ({lo:.2}–{hi:.2})")
}

/// The promise, checked: the `count` committed rows (as many as `committed` counted), the
/// highest `highest`, hold exactly `INV00000001 ..=` the count.
pub(super) fn check_numbered(
    count: i64,
    highest: Option<String>,
    committed: &AtomicU64,
) -> Result<(), BoxError> {
    let gapless = count as u64 == committed.load(Ordering::Relaxed)
        && highest.as_deref().unwrap_or("INV00000000") == format!("INV{count:08}");
    println!(
        "\nseqgen's committed rows: {count}, numbered 1..={count} without a hole: {}",
        if gapless { "yes" } else { "NO" }
    );
    if !gapless {
        return Err("seqgen's gapless rows have a hole or a duplicate".into());
    }
    Ok(())
}
