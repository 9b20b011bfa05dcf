//! `diesel_seqgen::insert_into(table).values(&mut rows)`: fills the ID fields of
//! `#[derive(DistributedId)]` models and inserts them on the same connection, in Diesel's
//! shape, with an escape hatch for any other Diesel statement.

mod bounds;
mod guessed;
pub(crate) mod plan;

pub use bounds::{Insert, InsertReturning};

use diesel::{Insertable, Table};

use crate::backend::IdConnection;
use crate::error::Result;
use crate::generator::Generator;
use crate::global::{default_generator, remembers};
use crate::model::numbering::{self, Numbering};
use crate::model::{fill, gapless_field, unfill, Records};
use plan::Plan;

/// Starts an insert that fills ID fields first: `diesel_seqgen::insert_into(table).values(&mut
/// rows).execute(conn)`, the same shape as Diesel's `insert_into`.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::DistributedId;
///
/// diesel::table! { users (id) { id -> Text, name -> Text } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = users)]
/// struct NewUser {
///     #[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6, batch = 100)]
///     id: String,
///     name: String,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL)").execute(&mut conn)?;
///
/// let mut ada = NewUser { id: String::new(), name: "Ada".into() };
/// diesel_seqgen::insert_into(users::table).values(&mut ada).execute(&mut conn)?;
/// assert!(ada.id.starts_with('U') && ada.id.ends_with("000001"));
///
/// let mut more: Vec<NewUser> = ["Grace", "Edsger"]
///     .map(|name| NewUser { id: String::new(), name: name.into() })
///     .into();
/// let inserted = diesel_seqgen::insert_into(users::table).values(&mut more).execute(&mut conn)?;
/// assert_eq!(inserted, 2);
/// assert!(more[1].id.ends_with("000003"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn insert_into<T: Table>(target: T) -> IncompleteInsert<T> {
    IncompleteInsert { target }
}

/// An insert without values yet; see [`insert_into`].
#[derive(Debug, Clone, Copy)]
#[must_use = "an insert does nothing until it is executed"]
pub struct IncompleteInsert<T> {
    target: T,
}

impl<T> IncompleteInsert<T> {
    /// The records to insert; their unset ID fields (and every gapless one) are filled when
    /// the insert runs, and stay readable in `records` afterwards.
    pub fn values<R: Records + ?Sized>(self, records: &mut R) -> InsertWithIds<'_, T, R> {
        InsertWithIds {
            target: self.target,
            records,
            generator: None,
        }
    }
}

/// An insert that fills ID fields, then runs as Diesel's; see [`insert_into`].
///
/// A failed insert (a unique violation, a lost connection) leaves the records as they were
/// given: every ID field it filled is unset again, whatever the connection form, the
/// generator or the mode. Gapless numbers went back with the rollback (left in the records, a
/// retry would insert them again: a duplicate); batched ones are holes. Running the insert
/// again takes new numbers. A transaction the database aborts after the insert succeeded
/// (a deadlock on a later statement, a Galera certification failure at the commit) leaves
/// them in the records: the next insert of those records gives every gapless field a new
/// number, and inside [`retry_transaction`](crate::retry_transaction) every field the
/// aborted attempt filled.
#[must_use = "an insert does nothing until it is executed"]
pub struct InsertWithIds<'a, T, R: ?Sized> {
    target: T,
    records: &'a mut R,
    generator: Option<&'a Generator>,
}

impl<'a, T, R> InsertWithIds<'a, T, R>
where
    T: Table,
    R: Records + ?Sized,
    for<'b> &'b R: Insertable<T>,
{
    /// Takes IDs from `generator` instead of the process-wide default.
    pub fn with_generator(mut self, generator: &'a Generator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// Fills the IDs, inserts, and returns the number of rows inserted.
    ///
    /// On PostgreSQL, records whose only ID field is gapless (with a spec of prefix, date part
    /// and zero-padded number) are numbered by the insert statement itself, which advances
    /// the counter too: the counter row stays locked from that one statement to the commit
    /// (see "Gapless mode", `guide::gapless`). Like any failed statement on PostgreSQL, a failed
    /// insert then aborts the caller's transaction, which gives the numbers back.
    pub fn execute<C>(mut self, conn: &mut C) -> Result<usize>
    where
        C: IdConnection,
        R: Insert<T, C>,
    {
        let own_generator = self.generator.is_some();
        let rows = self.records.as_rows();
        match plan::plan::<C::Backend, _>(rows, own_generator, || remembers(conn)) {
            Plan::Numbered(field) => {
                if let Some(inserted) = self.numbered(field, conn)? {
                    return Ok(inserted);
                }
            }
            Plan::OnAGuess => return self.execute_on_a_guess(conn),
            Plan::Filled => {}
        }
        self.execute_with(conn, |target, records, conn| {
            R::__execute(&target, records, conn)
        })
    }

    /// [`Plan::Numbered`]: a gapless insert numbered by the insert statement itself
    /// (`model/numbering.rs`, `backend/one_statement.rs`); `None`, with nothing sent, for a key
    /// whose shape this process has not checked yet.
    fn numbered<C>(&mut self, field: numbering::Field, conn: &mut C) -> Result<Option<usize>>
    where
        C: IdConnection,
        R: Insert<T, C>,
    {
        let default;
        let generator = match self.generator {
            Some(generator) => generator,
            None => {
                default = default_generator(conn)?;
                &default
            }
        };
        let n = self.records.as_rows().len();
        let Some((numbering, plan)) = Numbering::start(generator.engine(), field, n)? else {
            return Ok(None);
        };
        let sent = R::__execute_numbered(&self.target, &*self.records, plan, conn);
        let numbered =
            numbering.end::<C::Backend, _>(generator.engine(), sent, self.records.as_rows())?;
        Ok(numbered.then_some(n))
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads one row (PostgreSQL, SQLite).
    pub fn get_result<C, U>(self, conn: &mut C) -> Result<U>
    where
        C: IdConnection,
        R: InsertReturning<T, C, U>,
    {
        self.execute_with(conn, |target, records, conn| {
            R::__get_result(target, records, conn)
        })
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads every row (PostgreSQL, SQLite).
    pub fn get_results<C, U>(self, conn: &mut C) -> Result<Vec<U>>
    where
        C: IdConnection,
        R: InsertReturning<T, C, U>,
    {
        self.execute_with(conn, |target, records, conn| {
            R::__get_results(target, records, conn)
        })
    }

    /// Fills the IDs, then runs your own Diesel statement on the filled records: any
    /// `on_conflict`, `returning` or batch form Diesel offers. With a gapless field, both run
    /// in one transaction (a savepoint inside the caller's), so the number and the row commit
    /// or roll back together even where a failed statement rolls back alone (SQLite, MySQL).
    /// A failure leaves the records as they were given, as every form of the insert does
    /// ([`InsertWithIds`]).
    ///
    /// A statement that skips records (`on_conflict_do_nothing`, `INSERT IGNORE`) still
    /// commits their numbers: in batched mode a hole, as any unused number; in gapless mode a
    /// hole in what must have none. There, return an error from the closure when it inserted
    /// fewer rows than it was given (`Err(diesel::result::Error::RollbackTransaction)`): the
    /// savepoint rolls back and the numbers go to the next caller.
    ///
    /// ```
    /// use diesel::prelude::*;
    /// use diesel_seqgen::DistributedId;
    ///
    /// diesel::table! { tags (id) { id -> Text, name -> Text } }
    ///
    /// #[derive(Insertable, DistributedId)]
    /// #[diesel(table_name = tags)]
    /// struct NewTag {
    ///     #[distributed_id(prefix = "T", date = "", pad = 4)]
    ///     id: String,
    ///     name: String,
    /// }
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// diesel::sql_query("CREATE TABLE tags (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
    ///     .execute(&mut conn)?;
    ///
    /// let mut inserted = 0;
    /// for name in ["rust", "diesel", "rust"] {
    ///     let mut tag = NewTag { id: String::new(), name: name.into() };
    ///     inserted += diesel_seqgen::insert_into(tags::table)
    ///         .values(&mut tag)
    ///         .execute_with(&mut conn, |table, row, conn| {
    ///             diesel::insert_into(table).values(row).on_conflict_do_nothing().execute(conn)
    ///         })?;
    /// }
    /// assert_eq!(inserted, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn execute_with<C, O>(
        self,
        conn: &mut C,
        insert: impl FnOnce(T, &R, &mut C) -> diesel::QueryResult<O>,
    ) -> Result<O>
    where
        C: IdConnection,
    {
        let InsertWithIds {
            target,
            records,
            generator,
        } = self;
        let gapless = gapless_field::<R::Row>().is_some();
        let mut filled = Vec::new();
        let result = {
            let work = |conn: &mut C| -> Result<O> {
                fill(
                    records.as_rows(),
                    conn,
                    &mut filled,
                    |conn| match generator {
                        Some(generator) => Ok(generator.engine().clone()),
                        None => default_generator(conn).map(Generator::into_engine),
                    },
                )?;
                Ok(insert(target, &*records, conn)?)
            };
            if gapless {
                crate::driver::transaction(conn, work)
            } else {
                work(conn)
            }
        };
        if result.is_err() {
            unfill(records.as_rows(), &filled);
        }
        result
    }
}
