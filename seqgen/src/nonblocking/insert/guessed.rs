//! [`crate::insert`]'s insert on a guess (`insert/guessed.rs`), on diesel-async: the default
//! generator on a connection that cannot remember its database, served from a guessed
//! database's cache by an insert that checks the guess itself.

use std::sync::Arc;

use diesel::query_builder::{InsertStatement, QueryFragment, QueryId};
use diesel::{Insertable, Table};
use diesel_async::methods::ExecuteDsl;
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::super::free::{default_generator_marked, fill};
use super::super::Generator;
use super::InsertWithIds;
use crate::backend::asserted::{is_not_asserted, Asserted};
use crate::backend::{AsyncBackend, Backend};
use crate::error::{Error, Result};
use crate::global::guess;
use crate::model::{gapless_field, unfill, Records};

impl<'a, T, R> InsertWithIds<'a, T, R>
where
    T: Table + Clone + Send + 'a,
    R: Records + Send + ?Sized,
    for<'b> &'b R: Insertable<T>,
{
    /// Inserts with the default generator on a guess, as the blocking insert does: `None`,
    /// with nothing done, for a generator of the caller's, gapless records, or a backend that
    /// tells its databases apart without a round trip.
    pub(super) async fn execute_on_a_guess<C>(&mut self, conn: &mut C) -> Result<Option<usize>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
        for<'b> &'b R::Row: Insertable<T>,
        for<'b> Asserted<
            InsertStatement<T, <&'b R as Insertable<T>>::Values>,
            <&'b R::Row as Insertable<T>>::Values,
        >: QueryFragment<C::Backend> + QueryId + Send,
    {
        if self.generator.is_some()
            || !<C::Backend as Backend>::IDENTIFY_IS_A_ROUND_TRIP
            || gapless_field::<R::Row>().is_some()
            || self.records.as_rows().is_empty()
            || self.records.as_rows().len() > <C::Backend as Backend>::MOST_ROWS_CHECKED
        {
            return Ok(None);
        }
        let Some(guess) = guess::guess(conn) else {
            let generator = default_generator_marked(conn, false).await?;
            return self.insert_from(&generator, conn).await.map(Some);
        };
        let mut filled = Vec::new();
        let guessed = Generator::from(guess.generator.clone());
        let attempt = match fill(self.records.as_rows(), Some(&guessed), conn, &mut filled).await {
            Ok(()) => self.send_asserted(conn, guess.marker.clone()).await,
            Err(e) => Err(e),
        };
        let remark = match attempt {
            Ok(inserted) if inserted > 0 => {
                guess::hit(&guess);
                return Ok(Some(inserted));
            }
            Ok(_) | Err(Error::DifferentDatabase) => {
                guess::missed(&guess);
                true
            }
            Err(Error::Database(ref e)) if is_not_asserted(e) => false,
            Err(e) => {
                unfill(self.records.as_rows(), &filled);
                return Err(e);
            }
        };
        let generator = default_generator_marked(conn, remark).await?;
        if !generator.as_ref().is(&guess.generator) {
            unfill(self.records.as_rows(), &filled);
        }
        self.insert_from(&generator, conn).await.map(Some)
    }

    /// Diesel's insert of the records, inserting nothing unless the session carries `marker`.
    async fn send_asserted<C>(&mut self, conn: &mut C, marker: Arc<str>) -> Result<usize>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        for<'b> &'b R::Row: Insertable<T>,
        for<'b> Asserted<
            InsertStatement<T, <&'b R as Insertable<T>>::Values>,
            <&'b R::Row as Insertable<T>>::Values,
        >: QueryFragment<C::Backend> + QueryId + Send,
    {
        let (target, records) = (self.target.clone(), &*self.records);
        // Made and handed to diesel-async before anything is awaited, as in
        // `gapless_in_one_statement`: held across an await, its type could not be shown `Send`.
        let sent = async {
            let rows = records.__rows().iter().map(Insertable::values).collect();
            let insert = diesel::insert_into(target).values(records);
            let statement = Asserted::new(insert, rows, marker);
            statement.is_safe_to_cache_prepared(&C::Backend::default())?;
            conn.execute_returning_count(statement).await
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
        fill(
            self.records.as_rows(),
            Some(generator),
            conn,
            &mut Vec::new(),
        )
        .await?;
        let insert = diesel::insert_into(self.target.clone()).values(&*self.records);
        Ok(insert.execute(conn).await?)
    }
}
