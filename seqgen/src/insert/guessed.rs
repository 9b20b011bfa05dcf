//! The default generator's insert on a connection that cannot remember its database (a plain
//! connection, `&mut *pooled`): served from a guessed database's cache by an insert that checks
//! the guess itself, so that telling the database apart costs no query (`global/guess.rs`,
//! `backend/asserted.rs`).

use diesel::Table;

use super::{Insert, InsertWithIds};
use crate::backend::IdConnection;
use crate::driver::{drive, Blocking};
use crate::error::Result;
use crate::generator::Generator;
use crate::global::guess::{self, Outcome};
use crate::global::{default_marked_on, remembers};
use crate::model::{fill, unfill, Records};

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
        let rows = self.records.as_rows();
        if !guess::worth_guessing::<C::Backend, _>(rows, self.generator.is_some())
            || remembers(conn)
        {
            return Ok(None);
        }
        let Some(guess) = guess::guess(conn) else {
            let generator = marked_default(conn, false)?;
            return self.insert_from(&generator, conn).map(Some);
        };
        let mut filled = Vec::new();
        let attempt = fill(rows, conn, &mut filled, |_| {
            Ok(guess.generator.engine().clone())
        })
        .and_then(|()| {
            let mark = guess.mark.clone();
            Ok(R::__execute_asserted(
                &self.target,
                &*self.records,
                mark,
                conn,
            )?)
        });
        let records = self.records.as_rows();
        let remark = match guess::judge(&guess, attempt, || unfill(records, &filled))? {
            Outcome::Inserted(inserted) => return Ok(Some(inserted)),
            Outcome::Identify { remark } => remark,
        };
        let generator = marked_default(conn, remark)?;
        if !generator.is(&guess.generator) {
            unfill(self.records.as_rows(), &filled); // holes in the guessed database
        }
        self.insert_from(&generator, conn).map(Some)
    }

    /// Fills what is unset from `generator`, and runs Diesel's insert; a failure unsets what
    /// it filled.
    fn insert_from<C>(&mut self, generator: &Generator, conn: &mut C) -> Result<usize>
    where
        C: IdConnection,
        R: Insert<T, C>,
    {
        let mut filled = Vec::new();
        let result = fill(self.records.as_rows(), conn, &mut filled, |_| {
            Ok(generator.engine().clone())
        })
        .and_then(|()| Ok(R::__execute(&self.target, &*self.records, conn)?));
        if result.is_err() {
            unfill(self.records.as_rows(), &filled);
        }
        result
    }
}

/// [`default_marked_on`] on a blocking connection.
fn marked_default<C: IdConnection>(conn: &mut C, remark: bool) -> Result<Generator> {
    let at = guess::place_of(conn);
    drive(default_marked_on(&mut Blocking(conn), at, remark))
}
