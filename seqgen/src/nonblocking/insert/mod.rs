//! `insert_into(table).values(&mut rows).execute(&mut conn).await`: the blocking insert's
//! fill-then-insert on diesel-async, and its one-statement gapless insert on PostgreSQL.

use diesel::deserialize::FromSqlRow;
use diesel::query_builder::{InsertStatement, QueryFragment, QueryId};
use diesel::sql_types::BigInt;
use diesel::{Insertable, Table};
use diesel_async::methods::{ExecuteDsl, LoadQuery};
use diesel_async::{AsyncConnection, RunQueryDsl};
use futures_core::Stream;

use super::free::{default_generator, fill};
use super::Generator;
use crate::backend::asserted::Asserted;
use crate::backend::one_statement::OneStatement;
use crate::backend::row_values::InsertRow;
use crate::backend::AsyncBackend;
use crate::driver::{begin, end};
use crate::error::Result;
use crate::insert::plan::{plan, Plan};
use crate::model::numbering::{self, Numbering};
use crate::model::{gapless_field, unfill, Records};

mod on_guess;

/// Starts an insert that fills ID fields first, on an async connection:
/// `diesel_seqgen::nonblocking::insert_into(table).values(&mut rows).execute(&mut conn).await`, as
/// [`crate::insert_into`] does on a blocking one.
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
    /// The records to insert; their unset ID fields (and every gapless one, always numbered
    /// in the transaction at hand) are filled when the insert runs.
    pub fn values<R: Records + ?Sized>(self, records: &mut R) -> InsertWithIds<'_, T, R> {
        InsertWithIds {
            target: self.target,
            records,
            generator: None,
        }
    }
}

/// An insert that fills ID fields, then runs as diesel-async's; see [`insert_into`].
#[must_use = "an insert does nothing until it is executed"]
pub struct InsertWithIds<'a, T, R: ?Sized> {
    target: T,
    records: &'a mut R,
    generator: Option<&'a Generator>,
}

impl<'a, T, R> InsertWithIds<'a, T, R>
where
    T: Table + Send + 'a,
    R: Records + Send + ?Sized,
    for<'b> &'b R: Insertable<T>,
{
    /// Takes IDs from `generator` instead of the process-wide default.
    pub fn with_generator(mut self, generator: &'a Generator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// Fills the IDs, inserts, and returns the number of rows inserted. On PostgreSQL a
    /// gapless record is numbered by the insert statement itself, as
    /// [`crate::insert::InsertWithIds::execute`] says.
    pub async fn execute<C>(mut self, conn: &mut C) -> Result<usize>
    where
        T: Clone,
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        i64: FromSqlRow<BigInt, C::Backend>,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
        for<'b> &'b R::Row: InsertRow<T>,
        for<'b> OneStatement<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
            QueryFragment<C::Backend> + QueryId + Send,
        for<'b> Asserted<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
            QueryFragment<C::Backend> + QueryId + Send,
    {
        // diesel-async's connections never remember their database.
        let own_generator = self.generator.is_some();
        match plan::<C::Backend, _>(self.records.as_rows(), own_generator, || false) {
            Plan::Numbered(field) => {
                if let Some(inserted) = self.numbered(field, conn).await? {
                    return Ok(inserted);
                }
            }
            Plan::OnAGuess => return self.execute_on_a_guess(conn).await,
            Plan::Filled => {}
        }
        fill_and_run!(self, conn, execute)
    }

    /// [`Plan::Numbered`], on diesel-async. Nothing is filled before the statement returned, so
    /// a future dropped midway leaves the records unset (and a transaction to its owner's
    /// rollback).
    async fn numbered<C>(&mut self, field: numbering::Field, conn: &mut C) -> Result<Option<usize>>
    where
        T: Clone,
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        i64: FromSqlRow<BigInt, C::Backend>,
        for<'b> &'b R::Row: InsertRow<T>,
        for<'b> OneStatement<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
            QueryFragment<C::Backend> + QueryId + Send,
    {
        let default;
        let generator = match self.generator {
            Some(generator) => generator,
            None => {
                default = default_generator(conn).await?;
                &default
            }
        };
        let (generator, n) = (&generator.inner, self.records.as_rows().len());
        let Some((numbering, plan)) = Numbering::start(generator.engine(), field, n)? else {
            return Ok(None);
        };
        let (target, records) = (self.target.clone(), &*self.records);
        // The statement is made and handed to diesel-async's `load` before anything is
        // awaited: held across an await, its type (which names `<&R::Row as InsertRow<T>>::Values`)
        // could not be shown `Send` for every lifetime, as `execute`'s future must be. For the
        // same reason this reads the row itself instead of `get_result`, whose future is a type
        // of the query's.
        let sent = async {
            let rows = records.__rows().iter().map(InsertRow::row_values).collect();
            let statement = OneStatement::new(target.from_clause(), rows, plan);
            statement.is_safe_to_cache_prepared(&C::Backend::default())?;
            let rows = conn.load(statement).await?;
            let mut rows = std::pin::pin!(rows);
            let first = std::future::poll_fn(|cx| Stream::poll_next(rows.as_mut(), cx)).await;
            first
                .map(|row| {
                    <i64 as FromSqlRow<BigInt, C::Backend>>::build_from_row(&row?)
                        .map_err(diesel::result::Error::DeserializationError)
                })
                .transpose()
        }
        .await;
        let numbered =
            numbering.end::<C::Backend, _>(generator.engine(), sent, self.records.as_rows())?;
        Ok(numbered.then_some(n))
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads one row (PostgreSQL, SQLite).
    pub async fn get_result<C, U>(self, conn: &mut C) -> Result<U>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        U: Send,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
    {
        fill_and_run!(self, conn, get_result)
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads every row (PostgreSQL, SQLite).
    pub async fn get_results<C, U>(self, conn: &mut C) -> Result<Vec<U>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        U: Send,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
    {
        fill_and_run!(self, conn, get_results)
    }

    /// Starts the insert: with a gapless field, a transaction (a savepoint inside the
    /// caller's), so that the number and the row commit or roll back together.
    async fn open<C>(self, conn: &mut C) -> Result<(T, Filling<'a, R>, Option<&'a Generator>)>
    where
        C: AsyncConnection,
    {
        let gapless = gapless_field::<R::Row>().is_some();
        if gapless {
            begin(conn).await?;
        }
        let filling = Filling {
            records: self.records,
            filled: Vec::new(),
            transaction: gapless,
            kept: false,
        };
        Ok((self.target, filling, self.generator))
    }
}

/// The body of each [`InsertWithIds`] statement: opens the insert, fills the records, runs
/// diesel-async's `$run` on them, and closes it. A macro rather than a function taking the
/// statement as an async closure: a future holding one cannot be shown `Send`
/// (rust-lang/rust#110338), and an axum handler's must be.
macro_rules! fill_and_run {
    ($insert:expr, $conn:ident, $run:ident) => {{
        let (target, mut filling, generator) = $insert.open($conn).await?;
        let result = async {
            fill(
                filling.records.as_rows(),
                generator,
                $conn,
                &mut filling.filled,
            )
            .await?;
            let insert = diesel::insert_into(target).values(&*filling.records);
            Ok(insert.$run($conn).await?)
        }
        .await;
        close($conn, result, filling).await
    }};
}
use fill_and_run;

/// The records of an insert being filled, and which (row, field) got an ID. The IDs are set
/// back to unset when it is dropped before the insert succeeded (and, with a gapless field,
/// its transaction committed): after a failure, and also when the insert's future is dropped
/// midway (a timeout). A rollback gives gapless numbers back to the next caller; left in the
/// records, a retry would insert them again — a duplicate. Batched ones are holes either way.
struct Filling<'a, R: Records + ?Sized> {
    records: &'a mut R,
    filled: Vec<(usize, usize)>,
    transaction: bool,
    /// The IDs stay: the insert succeeded (and its transaction committed).
    kept: bool,
}

impl<R: Records + ?Sized> Drop for Filling<'_, R> {
    fn drop(&mut self) {
        if !self.kept {
            unfill(self.records.as_rows(), &self.filled);
        }
    }
}

/// Ends an insert [`InsertWithIds::open`] started: commits or rolls back its transaction, if
/// it has one; the records keep their IDs only once it committed (see [`Filling`]).
async fn close<C, O, R>(conn: &mut C, result: Result<O>, mut filling: Filling<'_, R>) -> Result<O>
where
    C: AsyncConnection,
    R: Records + ?Sized,
{
    let result = if filling.transaction {
        end(conn, result).await
    } else {
        result
    };
    filling.kept = result.is_ok();
    result
}
