//! The default generator's insert on a connection that cannot remember its database (a plain
//! connection, `&mut *pooled`): served from a guessed database's cache by an insert that checks
//! the guess itself, so that telling the database apart costs no query (`global/guess.rs`,
//! `backend/asserted.rs`).

use diesel::Table;

use super::{Insert, InsertWithIds};
use crate::backend::asserted::is_not_asserted;
use crate::backend::{Backend, IdConnection};
use crate::error::{Error, Result};
use crate::generator::Generator;
use crate::global::{default_generator_marked, guess, remembers};
use crate::model::{fill, gapless_field, unfill, Records};

impl<T, R> InsertWithIds<'_, T, R>
where
    T: Table,
    R: Records + ?Sized,
{
    /// Inserts with the default generator on a guess, where one is to be had: `None`, with
    /// nothing done, for a generator of the caller's, gapless records, a connection that
    /// remembers its database, or one told apart without a round trip.
    pub(super) fn execute_on_a_guess<C>(&mut self, conn: &mut C) -> Result<Option<usize>>
    where
        C: IdConnection,
        R: Insert<T, C>,
    {
        if self.generator.is_some()
            || !<C::Backend as Backend>::IDENTIFY_IS_A_ROUND_TRIP
            || gapless_field::<R::Row>().is_some()
            || self.records.as_rows().is_empty()
            || self.records.as_rows().len() > <C::Backend as Backend>::MOST_ROWS_CHECKED
            || remembers(conn)
        {
            return Ok(None);
        }
        let Some(guess) = guess::guess(conn) else {
            let generator = default_generator_marked(conn, false)?;
            return self.insert_from(&generator, conn).map(Some);
        };
        let mut filled = Vec::new();
        let rows = self.records.as_rows();
        let attempt =
            fill(rows, conn, &mut filled, |_| Ok(guess.generator.clone())).and_then(|()| {
                Ok(R::__execute_asserted(
                    &self.target,
                    &*self.records,
                    guess.marker.clone(),
                    conn,
                )?)
            });
        let remark = match attempt {
            Ok(inserted) if inserted > 0 => {
                guess::hit(&guess);
                return Ok(Some(inserted));
            }
            // Inserted nothing: the session is not marked as reaching that database.
            Ok(_) | Err(Error::DifferentDatabase) => {
                guess::missed(&guess);
                true
            }
            // Not an insert that checks itself: the guess is checked with a query instead.
            Err(Error::Database(ref e)) if is_not_asserted(e) => false,
            Err(e) => {
                // Numbers of a database the guess has not shown this one to be: a retry with
                // them could insert another database's numbers.
                unfill(self.records.as_rows(), &filled);
                return Err(e);
            }
        };
        let generator = default_generator_marked(conn, remark)?;
        if !generator.is(&guess.generator) {
            unfill(self.records.as_rows(), &filled); // holes in the guessed database
        }
        self.insert_from(&generator, conn).map(Some)
    }

    /// Fills what is unset from `generator`, and runs Diesel's insert.
    fn insert_from<C>(&mut self, generator: &Generator, conn: &mut C) -> Result<usize>
    where
        C: IdConnection,
        R: Insert<T, C>,
    {
        fill(self.records.as_rows(), conn, &mut Vec::new(), |_| {
            Ok(generator.clone())
        })?;
        Ok(R::__execute(&self.target, &*self.records, conn)?)
    }
}
