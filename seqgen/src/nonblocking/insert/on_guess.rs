//! [`crate::insert`]'s insert on a guess (`insert/guessed.rs`), on diesel-async: the default
//! generator on a connection that cannot remember its database, served from a guessed
//! database's cache by an insert that checks the guess itself.

use diesel::query_builder::{InsertStatement, QueryFragment, QueryId};
use diesel::{Insertable, Table};
use diesel_async::methods::ExecuteDsl;
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::super::free::fill;
use super::super::Generator;
use super::InsertWithIds;
use crate::backend::asserted::{asks_first, Asserted, Mark};
use crate::backend::row_values::InsertRow;
use crate::backend::{AsyncBackend, Backend};
use crate::driver::NonBlocking;
use crate::error::Result;
use crate::global::default_marked_on;
use crate::global::guess::{self, Outcome};
use crate::model::{unfill, Records};

impl<'a, T, R> InsertWithIds<'a, T, R>
where
    T: Table + Clone + Send + 'a,
    R: Records + Send + ?Sized,
    for<'b> &'b R: Insertable<T>,
{
    /// [`Plan::OnAGuess`](crate::insert::plan::Plan::OnAGuess), as the blocking insert does it.
    pub(super) async fn execute_on_a_guess<C>(&mut self, conn: &mut C) -> Result<usize>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
        for<'b> &'b R::Row: InsertRow<T>,
        for<'b> Asserted<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
            QueryFragment<C::Backend> + QueryId + Send,
    {
        let Some(guess) = guess::guess(conn) else {
            let generator = marked_default(conn, false).await?;
            return self.insert_from(&generator, conn).await;
        };
        let mut filled = Vec::new();
        let guessed = Generator::from(guess.generator.clone());
        let attempt = match fill(self.records.as_rows(), Some(&guessed), conn, &mut filled).await {
            Ok(()) => self.send_asserted(conn, guess.mark.clone()).await,
            Err(e) => Err(e),
        };
        let records = self.records.as_rows();
        let remark = match guess::judge(&guess, attempt, || unfill(records, &filled))? {
            Outcome::Inserted(inserted) => return Ok(inserted),
            Outcome::Identify { remark } => remark,
        };
        let generator = marked_default(conn, remark).await?;
        if !generator.as_ref().is(&guess.generator) {
            unfill(self.records.as_rows(), &filled);
        }
        self.insert_from(&generator, conn).await
    }

    /// Diesel's insert of the records, inserting nothing unless the session carries `mark`.
    async fn send_asserted<C>(&mut self, conn: &mut C, mark: Mark) -> Result<usize>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        for<'b> &'b R::Row: InsertRow<T>,
        for<'b> Asserted<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
            QueryFragment<C::Backend> + QueryId + Send,
    {
        let (target, records) = (self.target.clone(), &*self.records);
        let rows = records.__rows();
        let check_first = asks_first::<C::Backend>(rows.len());
        let carries = match check_first {
            true => C::Backend::carries_mark(&mut NonBlocking(&mut *conn), &mark.value).await?,
            false => true,
        };
        // Made and handed to diesel-async before anything is awaited, as in `numbered`: held
        // across an await, its type could not be shown `Send`.
        let sent = async {
            let mark = (!check_first).then_some(mark);
            let statement = Asserted::of::<T, R::Row>(&target, rows, mark);
            statement.is_safe_to_cache_prepared(&C::Backend::default())?;
            match carries {
                true => conn.execute_returning_count(statement).await,
                false => Ok(0),
            }
        }
        .await;
        Ok(sent?)
    }

    /// Fills what is unset from `generator`, and runs Diesel's insert.
    async fn insert_from<C>(&mut self, generator: &Generator, conn: &mut C) -> Result<usize>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
    {
        let mut filled = Vec::new();
        let result = match fill(self.records.as_rows(), Some(generator), conn, &mut filled).await {
            Ok(()) => {
                let insert = diesel::insert_into(self.target.clone()).values(&*self.records);
                insert.execute(conn).await.map_err(Into::into)
            }
            Err(e) => Err(e),
        };
        if result.is_err() {
            unfill(self.records.as_rows(), &filled);
        }
        result
    }
}

/// [`default_marked_on`] on an async connection.
async fn marked_default<C>(conn: &mut C, remark: bool) -> Result<Generator>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    let at = guess::place_of(conn);
    Ok(Generator::from(
        default_marked_on(&mut NonBlocking(conn), at, remark).await?,
    ))
}
