//! Deleting the counter rows of periods long past, never one an instance may still number in.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{counters, recorded_spec, refused, Counter};
use crate::backend::{Backend, Counter as Row, IdConnection};
use crate::error::Result;
use diesel_seqgen_core::TimeZone;

/// Deletes `key`'s counter rows of the periods before `before`, in one transaction, and
/// returns the periods deleted. A key's counter row is only needed while its period can still
/// hand out numbers: delete periods long past, on every instance's clock.
///
/// With a [reset](diesel_seqgen_core::Reset), the rows are those of the reset's periods, and
/// `before` is one of them (`2025` under `reset = "year"`).
///
/// Refused ([`Error::Refused`](crate::Error::Refused)): a key without a date part or that never resets (its one row is its counter), a
/// date pattern whose periods do not sort as dates do (`%d%m%Y`), a `before` that is not a
/// period of the key, and a `before` after the current period at `now` in `tz` or after the
/// key's latest period. The current period is never deleted, nor the newest period in the
/// table (an instance whose clock is ahead, or a little behind, may be using it).
///
/// Also refused: a period whose row took a number less than `min_age` ago (on the database's
/// clock), or takes one while it is being pruned (each row is deleted only if it still holds
/// the value read). An instance whose clock lags could still be taking numbers in it, and
/// after the delete it would create the row again and hand out that period's numbers a second
/// time.
pub fn prune<C>(
    conn: &mut C,
    key: &str,
    before: &str,
    now: DateTime<Utc>,
    tz: TimeZone,
    min_age: std::time::Duration,
) -> Result<Vec<String>>
where
    C: IdConnection,
{
    let refuse = |reason: String| refused(key, reason);
    conn.transaction(|conn| {
        C::Backend::lock_for_writing(conn)?;
        let spec = recorded_spec(conn, key)?.with_time_zone(tz);
        let pattern = spec.date();
        let reset = spec.reset();
        if pattern.is_empty() || reset == Some(diesel_seqgen_core::Reset::Never) {
            let why = if pattern.is_empty() { "has no date part" } else { "never resets" };
            return Err(refuse(format!(
                "it {why}: its one row is its counter, and deleting it would hand its numbers out again"
            )));
        }
        // A reset's periods sort as dates whatever the date prints.
        if reset.is_none() && !sorts_as_dates(pattern) {
            return Err(refuse(format!(
                "its periods (`{pattern}`) do not sort as dates, so \"before\" cannot be told by comparing them; delete old rows by hand"
            )));
        }
        let current = match reset {
            None => tz.format(now, pattern),
            Some(_) => spec.counter_period(&spec.period_at(now)),
        };
        if !same_form(before, &current) {
            return Err(refuse(format!(
                "{before:?} is not a period of `{pattern}` (this period is {current:?})"
            )));
        }
        let rows: Vec<Counter> = counters(conn, Some(key))?
            .into_iter()
            .filter(|row| same_form(&row.period, &current))
            .collect();
        // The newest period of each scope (one, `""`, for an unscoped key).
        let mut newest: BTreeMap<&str, &str> = BTreeMap::new();
        for row in &rows {
            let period = newest.entry(&row.scope).or_default();
            *period = (*period).max(&row.period);
        }
        let latest = newest.values().copied().max().map_or(current.as_str(), |p| p.max(&current));
        if before > latest {
            return Err(refuse(format!(
                "{before:?} is after the current period {latest:?}, which is never deleted"
            )));
        }
        // The newest row of each scope stays too: the last period in use, perhaps still on a
        // late clock.
        let old: Vec<&Counter> = rows
            .iter()
            .filter(|row| {
                row.period.as_str() < before && newest.get(row.scope.as_str()) != Some(&&*row.period)
            })
            .collect();
        if !old.is_empty() && !min_age.is_zero() {
            let db_now = C::Backend::database_now(conn)?;
            for Counter {
                period, updated_at, ..
            } in &old
            {
                let age = age(&db_now, updated_at).ok_or_else(|| {
                    refuse(format!(
                        "cannot tell how long ago period {period:?} took a number \
                         ({updated_at:?}, database time {db_now:?}): prune with no minimum age"
                    ))
                })?;
                if age < min_age {
                    return Err(refuse(format!(
                        "period {period:?} took a number {}s ago, less than the minimum age of \
                         {}s: an instance whose clock lags may still be in it",
                        age.as_secs(),
                        min_age.as_secs()
                    )));
                }
            }
        }
        // Compare-and-delete: a row that took a number after it was read above (its age
        // checked on a value since gone) is kept, and nothing is pruned.
        for row in &old {
            let counter = Row::new(key, &row.scope, &row.period);
            if C::Backend::delete_row(conn, counter, row.current_value)? == 0 {
                return Err(refuse(format!(
                    "period {:?} took a number while it was being pruned: an instance is still in it",
                    row.period
                )));
            }
        }
        let periods: std::collections::BTreeSet<String> =
            old.into_iter().map(|row| row.period.clone()).collect();
        Ok(periods.into_iter().collect())
    })
}

/// How long before `now` the time `then` was, both as the database prints them (whole
/// seconds are read); `None` when either does not read as a time.
pub(super) fn age(now: &str, then: &str) -> Option<std::time::Duration> {
    let read = |text: &str| {
        chrono::NaiveDateTime::parse_from_str(text.get(..19)?, "%Y-%m-%d %H:%M:%S").ok()
    };
    let seconds = (read(now)? - read(then)?).num_seconds().max(0);
    Some(std::time::Duration::from_secs(seconds.unsigned_abs()))
}

/// Whether every period of `pattern` sorts as the dates it shows: numeric fields from the
/// year down with none left out (`%Y%m%d`, `%y-%m`, `%Y%j`), and literal text.
fn sorts_as_dates(pattern: &str) -> bool {
    let mut fields = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('y') => fields.push('Y'),
                Some(c) => fields.push(c),
                None => return false,
            }
        }
    }
    ["YmdHMS", "YjHMS"]
        .iter()
        .any(|order| !fields.is_empty() && order.starts_with(&fields))
}

/// Whether `a` has the form of `b`: digits where `b` has digits, the same text elsewhere.
fn same_form(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            if y.is_ascii_digit() {
                x.is_ascii_digit()
            } else {
                x == y
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_sort_as_dates_only_from_the_year_down() {
        for pattern in ["%Y", "%Y%m", "%y%m%d", "%Y-%m-%d", "%Y%j", "%Y%m%d%H"] {
            assert!(sorts_as_dates(pattern), "{pattern}");
        }
        for pattern in ["%d%m%Y", "%m%Y", "%Y%-m", "%b%Y", "%Y%d", "", "%"] {
            assert!(!sorts_as_dates(pattern), "{pattern}");
        }
    }

    #[test]
    fn ages_read_from_what_the_databases_print() {
        let age = |now, then| age(now, then).map(|d| d.as_secs());
        assert_eq!(
            age("2026-11-23 05:00:00", "2026-11-23 04:00:00"),
            Some(3600)
        );
        assert_eq!(
            age("2026-11-23 05:00:00.123456", "2026-11-22 05:00:00.9"),
            Some(86400)
        );
        assert_eq!(age("2026-11-23 05:00:00", "2026-11-23 05:00:01"), Some(0));
        assert_eq!(age("now", "2026-11-23 05:00:01"), None);
    }

    #[test]
    fn a_period_has_the_form_of_another() {
        assert!(same_form("2025-07", "2026-11"));
        assert!(!same_form("2025/07", "2026-11"));
        assert!(!same_form("202507", "2026-11"));
        assert!(!same_form("2025-0x", "2026-11"));
    }
}
