//! The void ledger: numbers that were issued and then cancelled (a voided invoice), each with
//! its reason, so that an auditor's "why is 1041 missing?" has an answer.

use crate::backend::{Backend, Counter, IdConnection, SharedStatements};
use crate::driver::{drive, Blocking};
use crate::engine::check_scope;
use crate::error::{Error, Result};
use diesel_seqgen_core::Scoped;

/// A number of the void ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Voided {
    /// The counter value.
    pub number: u64,
    /// Why it was voided.
    pub reason: String,
}

/// Records in the void ledger (`db_key_void`) that `id`, an ID of `spec` (`&spec`, or
/// `spec.scope("acme")` for one taken in a scope) the counter handed out,
/// was cancelled, and why. It runs on `conn`, so inside your transaction it commits or rolls
/// back with the rest of it (voiding an invoice and marking the invoice row, say). The number is
/// not handed out again: voiding explains a gap, it does not fill it.
///
/// Fails with [`Error::InvalidId`] for an ID `spec` could not have produced (or one of a
/// `cycle` spec, whose IDs repeat), [`Error::NotIssued`] for a number past the counter, and
/// [`Error::AlreadyVoided`].
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").gapless().build()?;
/// let id = conn.transaction(|conn| diesel_seqgen::global::next_id(conn, &invoices))?;
///
/// diesel_seqgen::ledger::void(&mut conn, &invoices, &id, "issued twice by the clerk; cancelled")?;
/// let ledger = diesel_seqgen::ledger::voided(&mut conn, &invoices, "")?;
/// assert_eq!((ledger[0].number, ledger[0].reason.as_str()), (1, "issued twice by the clerk; cancelled"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn void<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>, id: &str, reason: &str) -> Result<()>
where
    C: IdConnection,
{
    let target = spec.into();
    let (spec, scope) = (target.spec(), target.scope());
    check_scope(spec, scope)?;
    let invalid = |reason: String| Error::InvalidId {
        key: spec.key().to_owned(),
        id: id.to_owned(),
        reason,
    };
    let parts = spec.parse(id).map_err(|e| invalid(e.to_string()))?;
    let number = spec
        .counter_of(&parts)
        .ok_or_else(|| invalid("its IDs repeat (`cycle`): it names no single number".into()))?;
    let (key, period) = (spec.key(), parts.period.as_str());
    let number_sql = i64::try_from(number).map_err(|_| invalid("past the largest i64".into()))?;
    let row = spec.counter_period(period);
    let counter = Counter::new(key, scope, &row);
    let issued = drive(C::Backend::read(&mut Blocking(conn), counter))?;
    if issued.is_none_or(|last| number_sql > last) {
        return Err(Error::NotIssued {
            key: key.to_owned(),
            period: period.to_owned(),
            number,
        });
    }
    if C::Backend::void(conn, counter, number_sql, reason)? {
        Ok(())
    } else {
        Err(Error::AlreadyVoided {
            key: key.to_owned(),
            period: period.to_owned(),
            number,
        })
    }
}

/// The void ledger of `spec` (`&spec`, or `spec.scope("acme")`) in `period` (the date part
/// as it appears in IDs; `""` without one), in number order. With a
/// [reset](diesel_seqgen_core::Reset), the ledger of the counter that period draws from.
pub fn voided<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>, period: &str) -> Result<Vec<Voided>>
where
    C: IdConnection,
{
    let target = spec.into();
    let (spec, scope) = (target.spec(), target.scope());
    check_scope(spec, scope)?;
    let row = spec.counter_period(period);
    let rows = C::Backend::voided(conn, Counter::new(spec.key(), scope, &row))?;
    Ok(rows
        .into_iter()
        .map(|(number, reason)| Voided {
            number: u64::try_from(number).unwrap_or(0),
            reason,
        })
        .collect())
}
