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
use crate::global::default_marked_on;
use crate::global::guess::{self, Outcome};
use crate::model::{fill, unfill, Records};

impl<T, R> InsertWithIds<'_, T, R>
where
    T: Table,
    R: Records + ?Sized,
{
    /// [`Plan::OnAGuess`](super::plan::Plan::OnAGuess): inserts with the default generator on
    /// a guess, where one is to be had; else, and after a wrong one, identifies the database
    /// with a query first.
    pub(super) fn execute_on_a_guess<C>(&mut self, conn: &mut C) -> Result<usize>
    where
        C: IdConnection,
        R: Insert<T, C>,
    {
        let rows = self.records.as_rows();
        let Some(guess) = guess::guess(conn) else {
            let generator = marked_default(conn, false)?;
            return self.insert_from(&generator, conn);
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
            Outcome::Inserted(inserted) => return Ok(inserted),
            Outcome::Identify { remark } => remark,
        };
        let generator = marked_default(conn, remark)?;
        if !generator.is(&guess.generator) {
            unfill(self.records.as_rows(), &filled); // holes in the guessed database
        }
        self.insert_from(&generator, conn)
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
