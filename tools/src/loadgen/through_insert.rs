//! `--via insert-into`: every row goes through `diesel_seqgen::insert_into`, the insert users
//! call, in bulks of `--bulk`, on the connection form `--form` names: the pooled connection as
//! r2d2 hands it out (`&mut pooled`), the connection inside it (`&mut *pooled`), a plain
//! connection of the thread's own, or with the process's own generator
//! (`.with_generator(&g)`). The rows are `rows.rs`' models.

use diesel_seqgen::Generator;

use super::args::{Args, Form};
use super::connection::{LoadgenConnection, Pooled};
use super::rows::Rows;
use super::BoxError;

/// Inserts `--bulk` rows of `--key` in one transaction (rolled back with `roll_back`, run
/// again after an abort with `--retry-conflicts`), on the connection form `--form` names:
/// `live` from the pool, or `plain`, opened on `url` when missing. Their IDs, or none when
/// rolled back; whatever the outcome, the IDs the insert filled in are pushed to `handed`.
pub(super) fn insert<C: LoadgenConnection>(
    live: &mut Pooled<C>,
    plain: &mut Option<C>,
    url: &str,
    generator: &Generator,
    args: &Args,
    roll_back: bool,
    handed: &mut Vec<String>,
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
    let ids = rows.ids();
    handed.extend(ids.iter().filter(|id| !id.is_empty()).cloned());
    match outcome {
        Ok(()) => Ok(ids),
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
