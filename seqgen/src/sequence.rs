//! Plain gapless counters without a model, in the spirit of django-sequences:
//! `diesel_seqgen::sequence::next_value(conn, "invoice")` inside a transaction.

use crate::backend::IdConnection;
use crate::driver::in_transaction;
use crate::error::Result;
use crate::generator::Generator;
use diesel_seqgen_core::Spec;

/// A named gapless counter: 1, 2, 3, … with no gap and no repeat among committed
/// transactions. The number is taken inside the caller's transaction, which keeps the counter
/// locked until it commits or rolls back (and a rollback gives the number back).
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
///
/// let first = conn.transaction(|conn| diesel_seqgen::sequence::next_value(conn, "invoice"))?;
/// let _rolled_back = conn.transaction(|conn| {
///     diesel_seqgen::sequence::next_value(conn, "invoice")?; // 2, given back by the rollback
///     Err::<(), _>(diesel_seqgen::Error::Database(diesel::result::Error::RollbackTransaction))
/// });
/// let second = conn.transaction(|conn| diesel_seqgen::sequence::next_value(conn, "invoice"))?;
/// assert_eq!((first, second), (1, 2));
///
/// // Outside a transaction a number could be lost before the row that uses it is written.
/// assert!(matches!(
///     diesel_seqgen::sequence::next_value(&mut conn, "invoice"),
///     Err(diesel_seqgen::Error::OutsideTransaction { .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sequence {
    spec: Spec,
    outside_transaction: bool,
}

impl Sequence {
    /// The counter named `key` in `db_key` (no date part: it never restarts).
    pub fn new(key: impl Into<String>) -> Result<Self> {
        Ok(Sequence {
            spec: Self::spec(&key.into(), false, false)?,
            outside_transaction: false,
        })
    }

    /// Fail with [`Error::Busy`](crate::Error::Busy) instead of waiting when another transaction holds the
    /// counter.
    pub fn nowait(mut self) -> Result<Self> {
        self.spec = Self::spec(self.spec.key(), true, self.spec.is_scoped())?;
        Ok(self)
    }

    /// Counts per scope (a company, an order): each scope value has its own counter, taken
    /// from [`scope`](Sequence::scope)`(value)`. A key counts either per scope or not at all
    /// ([`Error::ShapeChanged`](crate::Error::ShapeChanged) otherwise).
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let receipts = diesel_seqgen::sequence::Sequence::new("receipt")?.scoped()?;
    /// let mut take = |shop| conn.transaction(|conn| receipts.scope(shop).next_value(conn));
    /// assert_eq!((take("north")?, take("north")?, take("south")?), (1, 2, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scoped(mut self) -> Result<Self> {
        let nowait = matches!(
            self.spec.mode(),
            diesel_seqgen_core::Mode::Gapless { nowait: true }
        );
        self.spec = Self::spec(self.spec.key(), nowait, true)?;
        Ok(self)
    }

    /// The spec of a sequence: no date part, 18 digits, gapless.
    /// The spec of the counter.
    #[cfg(seqgen_async)]
    pub(crate) fn counter_spec(&self) -> &Spec {
        &self.spec
    }

    /// Whether a number may be taken outside a transaction (in one of its own).
    #[cfg(seqgen_async)]
    pub(crate) fn outside_transaction(&self) -> bool {
        self.outside_transaction
    }

    fn spec(key: &str, nowait: bool, scoped: bool) -> Result<Spec> {
        let builder = Spec::builder(key).date("").pad(18);
        let builder = if nowait {
            builder.gapless_nowait()
        } else {
            builder.gapless()
        };
        let builder = if scoped { builder.scoped() } else { builder };
        Ok(builder.build()?)
    }

    /// Also take numbers outside a transaction, each in a transaction of its own. Such a
    /// number is committed as soon as it is taken: if the row that uses it is never written,
    /// it is skipped.
    pub fn allow_outside_transaction(mut self) -> Self {
        self.outside_transaction = true;
        self
    }

    /// The next value.
    pub fn next_value<C>(&self, conn: &mut C) -> Result<i64>
    where
        C: IdConnection,
    {
        self.scope("").next_value(conn)
    }

    /// The next `n` values, consecutive.
    pub fn next_values<C>(&self, conn: &mut C, n: usize) -> Result<Vec<i64>>
    where
        C: IdConnection,
    {
        self.scope("").next_values(conn, n)
    }

    /// This [scoped](Sequence::scoped) sequence in `scope`, whose values it takes.
    pub fn scope<'a>(&'a self, scope: &'a str) -> ScopedSequence<'a> {
        ScopedSequence {
            sequence: self,
            scope,
        }
    }
}

/// A [scoped](Sequence::scoped) sequence in one of its scopes: [`Sequence::scope`].
#[derive(Debug, Clone, Copy)]
pub struct ScopedSequence<'a> {
    sequence: &'a Sequence,
    scope: &'a str,
}

impl<'a> ScopedSequence<'a> {
    /// The sequence.
    pub fn sequence(&self) -> &'a Sequence {
        self.sequence
    }

    /// The scope value; empty for a sequence without scopes.
    pub fn scope(&self) -> &'a str {
        self.scope
    }

    /// The next value in this scope.
    pub fn next_value<C>(&self, conn: &mut C) -> Result<i64>
    where
        C: IdConnection,
    {
        Ok(self.next_values(conn, 1)?[0])
    }

    /// The next `n` values in this scope, consecutive.
    pub fn next_values<C>(&self, conn: &mut C, n: usize) -> Result<Vec<i64>>
    where
        C: IdConnection,
    {
        // Gapless numbers are never cached: any generator takes them the same way.
        let generator = Generator::new();
        let spec = self.sequence.spec.scope(self.scope);
        if self.sequence.outside_transaction && !in_transaction(conn) {
            conn.transaction(|conn| generator.next_numbers(conn, spec, n))
        } else {
            generator.next_numbers(conn, spec, n)
        }
    }
}

impl<'a> From<&'a Sequence> for ScopedSequence<'a> {
    fn from(sequence: &'a Sequence) -> Self {
        sequence.scope("")
    }
}

/// The next value of the gapless counter `key`, inside the caller's transaction. See
/// [`Sequence`].
pub fn next_value<C>(conn: &mut C, key: &str) -> Result<i64>
where
    C: IdConnection,
{
    Sequence::new(key)?.next_value(conn)
}

/// The next `n` values of the gapless counter `key`, inside the caller's transaction.
pub fn next_values<C>(conn: &mut C, key: &str, n: usize) -> Result<Vec<i64>>
where
    C: IdConnection,
{
    Sequence::new(key)?.next_values(conn, n)
}
