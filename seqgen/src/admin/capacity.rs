//! How much of each counter is used, what happens at its end, and when it runs out at the rate
//! its period has gone so far: from `db_key` alone (its values, the shapes recorded on the keys'
//! rows, when each row was created and last reserved from), never from a business table.

use chrono::{DateTime, TimeDelta, Utc};

use super::prune::age;
use super::{counters, Counter};
use crate::backend::{Backend, IdConnection};
use crate::error::Result;
use diesel_seqgen_core::{Overflow, Spec, TimeZone};

/// One counter's capacity: see [`capacity`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CounterCapacity {
    /// The key.
    pub key: String,
    /// The scope (`""` unscoped).
    pub scope: String,
    /// The period (`""` without a date part).
    pub period: String,
    /// Numbers taken (reserved) so far: the counter's value.
    pub used: u64,
    /// How the counter ends, and how many numbers it holds until then.
    pub limit: Limit,
    /// Whether the period is the current one (in the time zone asked for); counters of past
    /// periods take no more numbers.
    pub current: bool,
    /// When the current period ends (keys with a date part).
    pub period_ends: Option<DateTime<Utc>>,
    /// When the counter runs out at the rate its period went so far (numbers taken since its
    /// row was created).
    pub runs_out: RunsOut,
}

/// When a counter runs out, at the rate its period went so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunsOut {
    /// Then, before its period ends.
    At(DateTime<Utc>),
    /// Not before its period ends.
    NotThisPeriod,
    /// Too little to go by: nothing taken yet, or for less than a minute.
    NotKnownYet,
    /// Never: it widens or repeats instead, its period is over, or its shape is unknown.
    Never,
}

/// How a counter ends, by its key's policy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// After `capacity` numbers the key fails with `Overflow` (or `SeriesExhausted`) until
    /// the period ends: the default policy, `letters` (which extends it), series.
    Stops {
        /// The numbers a period holds.
        capacity: u64,
    },
    /// `widen`: past `at` the IDs get a digit wider, and go on.
    Widens {
        /// The last number of the pad's width.
        at: u64,
    },
    /// `cycle`: after `every` numbers the shown numbers start again at 1.
    Repeats {
        /// The numbers of one cycle.
        every: u64,
    },
    /// The key's shape could not be read (none recorded yet, or obfuscated: the shape holds
    /// only the key's fingerprint): says why, instead of guessing.
    Unknown(String),
}

impl CounterCapacity {
    /// The part of its numbers used, 0.0 to 1.0: of the capacity for a counter that stops, of
    /// the pad's width for one that widens, of the current cycle for one that repeats.
    pub fn used_ratio(&self) -> Option<f64> {
        let (used, of) = match self.limit {
            Limit::Stops { capacity } => (self.used, capacity),
            Limit::Widens { at } => (self.used, at),
            Limit::Repeats { every } if self.used > 0 => ((self.used - 1) % every + 1, every),
            Limit::Repeats { every } => (0, every),
            Limit::Unknown(_) => return None,
        };
        (of > 0).then(|| (used as f64 / of as f64).min(1.0))
    }

    /// Whether running out would stop the key's inserts (the counter stops, in a period that is
    /// still current).
    pub fn can_run_out(&self) -> bool {
        self.current && matches!(self.limit, Limit::Stops { .. })
    }
}

/// The capacity of every counter in `db_key` (of `key` alone, with one): the counters of each
/// key's periods and scopes, by key, scope and period; a dated key's own row (its settings) is
/// left out. Periods are taken in `tz` (a shape does not record its time zone); `now` decides
/// which period is current and when the forecasts fall.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::admin::{self, Limit};
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// let tickets = diesel_seqgen::Spec::builder("tickets").prefix("T").date("").pad(3).batch(5).build()?;
/// let generator = diesel_seqgen::Generator::builder().fixed_batch().build();
/// generator.next_id(&mut conn, &tickets)?; // a block of 5 reserved
/// let now = chrono::Utc::now();
/// let found = admin::capacity(&mut conn, Some("tickets"), diesel_seqgen::TimeZone::Utc, now)?;
/// assert_eq!((found[0].used, &found[0].limit), (5, &Limit::Stops { capacity: 999 }));
/// assert!((found[0].used_ratio().unwrap() - 5.0 / 999.0).abs() < 1e-9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn capacity<C>(
    conn: &mut C,
    key: Option<&str>,
    tz: TimeZone,
    now: DateTime<Utc>,
) -> Result<Vec<CounterCapacity>>
where
    C: IdConnection,
{
    let rows = counters(conn, key)?;
    let db_now = C::Backend::database_now(conn)?;
    let mut found = Vec::new();
    for keys_rows in rows.chunk_by(|a, b| a.key == b.key) {
        let key_row = keys_rows
            .iter()
            .find(|row| row.scope.is_empty() && row.period.is_empty());
        let spec = match key_row.and_then(|row| row.shape.as_deref()) {
            None => Err("no shape is recorded on the key's row yet".to_owned()),
            Some(shape) => Spec::from_shape(&keys_rows[0].key, shape)
                .map(|spec| spec.with_time_zone(tz))
                .map_err(|e| e.to_string()),
        };
        let dated = spec.as_ref().map_or_else(
            |_| keys_rows.iter().any(|row| !row.period.is_empty()),
            |spec| !spec.date().is_empty(),
        );
        let scoped = keys_rows.iter().any(|row| !row.scope.is_empty());
        // Where a new counter starts: the numbers below it were never taken.
        let below_start = key_row
            .and_then(|row| row.start_value)
            .and_then(|start| u64::try_from(start - 1).ok())
            .unwrap_or(0);
        for row in keys_rows {
            // A dated or scoped key's own row holds its settings, not a counter.
            let settings_only = row.scope.is_empty() && row.period.is_empty() && (dated || scoped);
            if settings_only {
                continue;
            }
            found.push(counter_capacity(
                row,
                spec.as_ref(),
                below_start,
                &db_now,
                now,
            ));
        }
    }
    Ok(found)
}

fn counter_capacity(
    row: &Counter,
    spec: std::result::Result<&Spec, &String>,
    below_start: u64,
    db_now: &str,
    now: DateTime<Utc>,
) -> CounterCapacity {
    let used = u64::try_from(row.current_value).unwrap_or(0);
    let (limit, current, period_ends) = match spec {
        Err(reason) => (Limit::Unknown(reason.clone()), false, None),
        Ok(spec) => {
            let current = spec.counter_period(&spec.period_at(now)) == row.period;
            (
                limit_of(spec),
                current,
                current.then(|| spec.period_ends(now)).flatten(),
            )
        }
    };
    let mut counter = CounterCapacity {
        key: row.key.clone(),
        scope: row.scope.clone(),
        period: row.period.clone(),
        used,
        limit,
        current,
        period_ends,
        runs_out: RunsOut::Never,
    };
    if let (true, Limit::Stops { capacity }) = (counter.can_run_out(), &counter.limit) {
        let over = age(db_now, &row.created_at);
        counter.runs_out = match runs_out(used, below_start, *capacity, over, now) {
            None => RunsOut::NotKnownYet,
            Some(at) if period_ends.is_some_and(|ends| at >= ends) => RunsOut::NotThisPeriod,
            Some(at) => RunsOut::At(at),
        };
    }
    counter
}

/// How `spec`'s counters end.
fn limit_of(spec: &Spec) -> Limit {
    let pad = 10u64.pow(spec.pad()) - 1;
    match (spec.overflow(), spec.series()) {
        (Overflow::Widen, None) => Limit::Widens { at: pad },
        (Overflow::Cycle { max }, None) => Limit::Repeats { every: max },
        _ => Limit::Stops {
            capacity: spec.capacity(),
        },
    }
}

/// When a counter at `used` of `capacity`, which started above `below_start` and took the
/// numbers since over `over`, runs out at the same rate (now, when full): `None` with too
/// little to go by (nothing taken, or in less than a minute).
fn runs_out(
    used: u64,
    below_start: u64,
    capacity: u64,
    over: Option<std::time::Duration>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    if used >= capacity {
        return Some(now);
    }
    let over = over.filter(|d| d.as_secs() >= 60)?.as_secs_f64();
    let taken = used.saturating_sub(below_start);
    if taken == 0 {
        return None;
    }
    let left = capacity.saturating_sub(used) as f64;
    let seconds = left / (taken as f64 / over);
    (seconds < 1e11).then(|| now + TimeDelta::seconds(seconds as i64))
}
