//! `--via insert-into`: every row goes through `diesel_seqgen::insert_into`, the insert users
//! call, in bulks of `--bulk`, on the connection form `--form` names: the pooled connection as
//! r2d2 hands it out (`&mut pooled`), the connection inside it (`&mut *pooled`), a plain
//! connection of the thread's own, or with the process's own generator
//! (`.with_generator(&g)`). The rows are models of `#[derive(DistributedId)]`, whose key is
//! fixed: `--key` is their scope, each with its own counter (`key_name`, as before).

use diesel_seqgen::{DistributedId, Generator};

use super::args::{Args, Form, Mode};
use super::connection::{loadgen_rows, LoadgenConnection, Pooled};
use super::BoxError;

/// A row of a batched key.
#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = loadgen_rows)]
pub struct BatchedRow {
    #[distributed_id(
        key = "loadgen_rows",
        prefix = "L",
        date = "",
        pad = 12,
        batch = 20,
        scope = "key_name"
    )]
    id: String,
    key_name: String,
}

/// A row of a gapless key.
#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = loadgen_rows)]
pub struct GaplessRow {
    #[distributed_id(
        key = "loadgen_rows_gapless",
        prefix = "L",
        date = "",
        pad = 12,
        gapless,
        scope = "key_name"
    )]
    id: String,
    key_name: String,
}

/// One insert's rows, of the mode asked for.
pub enum Rows {
    /// `--mode batched`.
    Batched(Vec<BatchedRow>),
    /// `--mode gapless`.
    Gapless(Vec<GaplessRow>),
}

impl Rows {
    /// `n` rows of `key`, their IDs unset.
    pub(super) fn new(mode: Mode, key: &str, n: usize) -> Self {
        let key_name = || key.to_owned();
        match mode {
            Mode::Batched => Rows::Batched(
                (0..n)
                    .map(|_| BatchedRow {
                        id: String::new(),
                        key_name: key_name(),
                    })
                    .collect(),
            ),
            Mode::Gapless => Rows::Gapless(
                (0..n)
                    .map(|_| GaplessRow {
                        id: String::new(),
                        key_name: key_name(),
                    })
                    .collect(),
            ),
        }
    }

    /// Their IDs, as the insert filled them.
    pub(super) fn ids(self) -> Vec<String> {
        match self {
            Rows::Batched(rows) => rows.into_iter().map(|row| row.id).collect(),
            Rows::Gapless(rows) => rows.into_iter().map(|row| row.id).collect(),
        }
    }
}

/// Inserts `--bulk` rows of `--key` in one transaction (rolled back with `roll_back`, run
/// again after an abort with `--retry-conflicts`), on the connection form `--form` names:
/// `live` from the pool, or `plain`, opened on `url` when missing. Their IDs, or none when
/// rolled back.
pub(super) fn insert<C: LoadgenConnection>(
    live: &mut Pooled<C>,
    plain: &mut Option<C>,
    url: &str,
    generator: &Generator,
    args: &Args,
    roll_back: bool,
) -> Result<Vec<String>, BoxError> {
    let mut rows = Rows::new(args.mode, &args.key, args.bulk as usize);
    let outcome = match args.form {
        Form::Pooled => in_transaction(live, args, roll_back, |conn| {
            C::insert_into_pooled(conn, &mut rows)
        }),
        Form::Deref => in_transaction(&mut **live, args, roll_back, |conn| {
            C::insert_into(conn, &mut rows, None)
        }),
        Form::Own => in_transaction(&mut **live, args, roll_back, |conn| {
            C::insert_into(conn, &mut rows, Some(generator))
        }),
        Form::Plain => {
            let conn = match plain {
                Some(conn) => conn,
                None => plain.insert({
                    let mut conn = C::establish(url)?;
                    <C as LoadgenConnection>::setup(&mut conn)?;
                    conn
                }),
            };
            let outcome = in_transaction(conn, args, roll_back, |conn| {
                C::insert_into(conn, &mut rows, None)
            });
            if outcome.is_err() {
                *plain = None; // a lost connection is opened again at the next insert
            }
            outcome
        }
    };
    match outcome {
        Ok(()) => Ok(rows.ids()),
        Err(diesel_seqgen::Error::Database(diesel::result::Error::RollbackTransaction)) => {
            Ok(Vec::new())
        }
        Err(e) => Err(e.into()),
    }
}

/// `insert` on `conn` as an app would write it: alone (the insert opens a transaction where it
/// needs one), or in a transaction of the caller's where some are rolled back (`--rollback`)
/// or an abort is run again (`--retry-conflicts`).
fn in_transaction<C: diesel_seqgen::IdConnection>(
    conn: &mut C,
    args: &Args,
    roll_back: bool,
    mut insert: impl FnMut(&mut C) -> diesel_seqgen::Result<usize>,
) -> diesel_seqgen::Result<()> {
    if args.rollback == 0.0 && !args.retry_conflicts {
        return insert(conn).map(drop);
    }
    let mut work = |conn: &mut C| {
        insert(conn)?;
        if roll_back {
            return Err(diesel_seqgen::Error::Database(
                diesel::result::Error::RollbackTransaction,
            ));
        }
        Ok(())
    };
    if args.retry_conflicts {
        diesel_seqgen::retry_transaction(conn, work)
    } else {
        conn.transaction(&mut work)
    }
}
