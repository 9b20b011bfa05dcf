//! The database side of the allocator, with no memory of its own: reservations (a committed
//! block outside any transaction, retried on conflicts; numbers inside the caller's
//! transaction; the nowait lock; the key's shape), which database a connection reaches
//! (`identity`) and which server of it after a failover (`timeline`), the risks refused by
//! default (`risks`), the one retry policy (`retry`), and the pools that reserve beside the
//! caller's transaction (`pool`). One statement per reservation, always bounded by what the
//! spec can hold.

pub(crate) mod identity;
pub(crate) mod pool;
pub(crate) mod retry;
pub(crate) mod risks;
pub(crate) mod timeline;

use crate::backend::{is_busy, Counter, Found, Identified, Request};
use crate::batch::{block_size, Batch};
use crate::counter_range::{largest, refused};
use crate::driver::Driver;
use crate::error::{Error, Result};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;
use identity::{identify, Identity};
use retry::retrying;
use risks::Acceptance;
use timeline::{check_timeline, reserve_in_transaction};

/// Reserves a committed block of at least `need` numbers on `conn`, outside any transaction,
/// checking which database it is (it must match `expected`, if given), that the server
/// commits durably and that the key has `spec`'s shape. On PostgreSQL one statement reserves
/// and reads all that, on MySQL two for an undated key seen before
/// ([`Backend::reserve_identified`]), and the checks run on what was read: a block reserved on
/// a database that is then refused is a hole, never served. Otherwise one query reads it
/// first, then the reservation follows. The block is `need` numbers, or the batch (the key
/// row's `batch_size` if an operator set one, else the generator's choice in `batch`) if that
/// is more and still fits; it comes back with the database's identity and the `batch_size`
/// read, for the next reservation to expect.
#[allow(clippy::too_many_arguments)] // each is one fact about the reservation
pub(crate) async fn reserve_block<D: Driver>(
    db: &mut D,
    spec: &Spec,
    scope: &str,
    period: &Period,
    need: u64,
    batch: Batch,
    non_durable: Acceptance,
    expected: Option<&Found>,
) -> Result<Reserved> {
    let request = Request {
        counter: Counter::of(spec, scope, period.counter()),
        // Both fit in an i64: `need <= largest` was checked, and `largest` is capped.
        need: need as i64,
        batch: i64::try_from(batch.generator).unwrap_or(i64::MAX),
        expected_batch: i64::try_from(batch.expected()).unwrap_or(i64::MAX),
        largest: largest(spec) as i64,
        shape: spec.shape(),
    };
    let identified = retrying!(D, db.reserve_identified(&request).await)?;
    let (found, reserved) = match identified {
        Some(Identified { found, count, last }) => (found, Some((last, count))),
        None => (db.identify(spec.key()).await?, None),
    };
    let identity = match found.token {
        Some(token) => Identity::new(&found.fingerprint, token),
        // The database's first reservation: its token is created now (outside any
        // transaction, where a rollback cannot take it back).
        None => identify(db, "", true)
            .await?
            .1
            .ok_or(Error::DifferentDatabase)?,
    };
    if expected.is_some_and(|e| !identity.matches(e)) {
        return Err(Error::DifferentDatabase);
    }
    check_timeline(&identity, found.timeline)?;
    non_durable.check::<D::Backend>(&found)?;
    check_shape(db, spec, found.shape, Retry::Yes).await?;
    let (last, count) = match reserved {
        // `count` is at most `largest`, an i64.
        Some((Some(last), count)) => (last, count as u64),
        // Past the limit: only what is needed, or the error that even that does not fit.
        Some((None, _)) => reserve_fitting(db, spec, scope, period, need, need, Retry::Yes).await?,
        None => {
            let count = block_size(found.batch, batch.generator, need);
            reserve_fitting(db, spec, scope, period, count, need, Retry::Yes).await?
        }
    };
    Ok(Reserved {
        identity,
        timeline: found.timeline,
        last,
        count,
        batch_size: found
            .batch
            .and_then(|b| u64::try_from(b).ok())
            .filter(|&b| b > 0),
    })
}

/// A committed block, as [`reserve_block`] returns it. (`pub` in a private module: a pool's
/// reservations return it through `PoolReserve`.)
#[derive(Debug)]
pub struct Reserved {
    /// The database it was reserved on.
    pub(crate) identity: Identity,
    /// That database's timeline when it was reserved (PostgreSQL).
    pub(crate) timeline: Option<u32>,
    /// Its last number.
    pub(crate) last: i64,
    /// Its size.
    pub(crate) count: u64,
    /// The key row's `batch_size`, if an operator set one, as read with the reservation.
    pub(crate) batch_size: Option<u64>,
}

/// Refuses `spec` if its key's row records another shape; records it if none is recorded.
pub(crate) async fn check_shape<D: Driver>(
    db: &mut D,
    spec: &Spec,
    recorded: Option<String>,
    retry: Retry,
) -> Result<()> {
    let recorded = match recorded {
        Some(recorded) => recorded,
        None => {
            let (key_row, shape) = (Counter::of(spec, "", ""), spec.shape());
            match retry {
                Retry::Yes => retrying!(D, db.claim_shape(key_row, shape).await)?,
                Retry::No { .. } => db.claim_shape(key_row, shape).await?,
            }
            .unwrap_or_default()
        }
    };
    same_shape(spec, recorded)
}

/// Refuses `spec` unless `recorded` is its shape.
pub(crate) fn same_shape(spec: &Spec, recorded: String) -> Result<()> {
    if recorded == spec.shape() {
        Ok(())
    } else {
        crate::trace::event!(
            warn,
            key = spec.key(),
            recorded = %recorded,
            requested = spec.shape(),
            "a spec of another shape than the one recorded on its key was refused"
        );
        Err(Error::ShapeChanged {
            key: spec.key().to_owned(),
            recorded,
            requested: spec.shape().to_owned(),
        })
    }
}

/// Whether a reservation runs in its own transaction, where a serialization failure or a
/// deadlock may simply be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    Yes,
    /// Inside the caller's transaction (on a session whose timeline was checked:
    /// `timeline.rs`); for gapless numbers with who accepts an asynchronous primary, whose
    /// replication a session checked anew is checked for too.
    No {
        gapless: Option<Acceptance>,
    },
}

/// Reserves `count` numbers, or only `need` when `count` would pass the spec's capacity (or
/// `i64::MAX`); refuses with nothing written when even `need` does not fit. Returns the last
/// number and how many were reserved.
pub(crate) async fn reserve_fitting<D: Driver>(
    db: &mut D,
    spec: &Spec,
    scope: &str,
    period: &Period,
    count: u64,
    need: u64,
    retry: Retry,
) -> Result<(i64, u64)> {
    let largest = largest(spec);
    let counter = Counter::of(spec, scope, period.counter());
    let count = count.min(largest);
    for count in [count, need] {
        // Both fit in an i64: `need <= largest` was checked, and `count` is capped above.
        let (count_sql, limit) = ((count as i64), (largest - count) as i64);
        let last = match retry {
            Retry::Yes => retrying!(D, db.reserve(counter, count_sql, limit, false).await)?,
            Retry::No { gapless } => {
                reserve_in_transaction(db, counter, count_sql, limit, gapless).await?
            }
        };
        if let Some(last) = last {
            return Ok((last, count));
        }
        if count <= need {
            break; // even the numbers needed do not fit
        }
    }
    Err(refused(spec, period, need))
}

/// Locks the counter row for the rest of the caller's transaction, or fails with
/// [`Error::Busy`] at once. The attempt runs in a savepoint, so a busy row leaves the caller's
/// transaction usable (PostgreSQL would otherwise abort it).
pub(crate) async fn lock_nowait<D: Driver>(db: &mut D, counter: Counter<'_>) -> Result<()> {
    match db.lock_nowait(counter).await {
        Ok(()) => Ok(()),
        Err(e) if is_busy(&e) => Err(Error::Busy {
            key: counter.key.to_owned(),
        }),
        Err(e) => Err(e.into()),
    }
}
