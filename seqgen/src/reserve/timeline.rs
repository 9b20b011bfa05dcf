//! Failovers (PostgreSQL): the server's **timeline**, one more at each promotion, read with
//! every reservation. A server on an older timeline than this process saw for the same
//! database is the old primary, restarted writable beside the promoted one (a split brain),
//! and is refused ([`Error::OldTimeline`]); a newer one makes generators drop the blocks they
//! reserved before (`Generator::follow_timeline`).
//!
//! A reservation outside a transaction reads the timeline with the database's identity. One
//! inside the caller's transaction (gapless numbers, a batched block without a pool) would pay
//! a query for that each time; instead the session carries the timeline seqgen checked it on
//! (`Backend::mark_timeline`), and the reservation's statement writes nothing unless that is
//! still the server's ([`reserve_in_transaction`]). A new session, or one whose mark a rollback
//! undid, is checked once, and its reservation runs again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use super::identity::{identify, Identity};
use super::risks::Acceptance;
use crate::backend::{Backend, Counter};
use crate::driver::Driver;
use crate::error::{Error, Result};

/// The highest timeline this process saw for each database.
static TIMELINES: OnceLock<Mutex<HashMap<Identity, u32>>> = OnceLock::new();

/// How many times this process saw a database move to a newer timeline: a failover it lived
/// through. Gapless numbers are checked again after one (`Acceptance::check_replication`).
static FAILOVERS: AtomicU64 = AtomicU64::new(0);

/// How many failovers this process lived through, of any database.
pub(crate) fn failovers_seen() -> u64 {
    FAILOVERS.load(Ordering::Acquire)
}

/// Refuses a server on an older `timeline` than this process saw for `identity`'s database
/// ([`Error::OldTimeline`]), and remembers a newer one. Backends without timelines pass
/// `None`.
pub(crate) fn check_timeline(identity: &Identity, timeline: Option<u32>) -> Result<()> {
    let Some(timeline) = timeline else {
        return Ok(());
    };
    let mut seen = TIMELINES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    // Looked up before inserting: a clone of the identity (an allocation) only for a new
    // database, not at every reservation.
    let highest = match seen.get_mut(identity) {
        Some(highest) => highest,
        None => seen.entry(identity.clone()).or_insert(timeline),
    };
    if timeline < *highest {
        crate::trace::event!(
            error,
            timeline,
            highest = *highest,
            "a PostgreSQL server on an older timeline than this database's was refused: an old primary beside the promoted one"
        );
        return Err(Error::OldTimeline {
            timeline,
            highest: *highest,
        });
    }
    if timeline > *highest {
        FAILOVERS.fetch_add(1, Ordering::AcqRel);
    }
    *highest = timeline;
    Ok(())
}

/// [`Backend::reserve`] inside the caller's transaction: `counter` advanced by `count` unless
/// past `limit` (`None`), on a session whose timeline was checked. A session not checked yet
/// is checked and marked first, and the reservation runs again; for `gapless` numbers, its
/// server's replication is checked too (a new session after a failover reaches a new primary).
pub(crate) async fn reserve_in_transaction<D: Driver>(
    db: &mut D,
    counter: Counter<'_>,
    count: i64,
    limit: i64,
    gapless: Option<Acceptance>,
) -> Result<Option<i64>> {
    if let Some(last) = db.reserve(counter, count, limit, true).await? {
        return Ok(Some(last));
    }
    if !D::Backend::TIMELINES {
        return Ok(None); // past the limit
    }
    // Past the limit, or on a session not checked yet: the second run tells.
    check_session(db).await?;
    if let Some(acceptance) = gapless {
        acceptance.check_replication(db, counter.key).await?;
    }
    Ok(db.reserve(counter, count, limit, true).await?)
}

/// Checks the timeline of the server `db` reaches against the highest this process saw for its
/// database, and marks the session with it.
async fn check_session<D: Driver>(db: &mut D) -> Result<()> {
    let (found, identity) = identify(db, "", false).await?;
    let Some(timeline) = found.timeline else {
        return Ok(()); // a standby: its reservation fails as read-only
    };
    // A database no block was ever reserved on has no token yet: its fingerprint alone.
    let identity = identity.unwrap_or_else(|| Identity::new(&found.fingerprint, 0));
    check_timeline(&identity, Some(timeline))?;
    // As the `Timeline` fragment prints it: the first 8 hex digits of a WAL file's name.
    db.mark_timeline(&format!("{timeline:08X}")).await?;
    Ok(())
}
