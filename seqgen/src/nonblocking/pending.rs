//! [`crate::pending`] on diesel-async's connections.

use diesel_async::AsyncConnection;
use diesel_seqgen_core::Spec;

use crate::backend::{AsyncBackend, Backend};
use crate::driver::{begin, end, NonBlocking};
use crate::error::Result;
use crate::pending::{check, read_batch, write_batch, Batch, Numbered, PendingRows};

/// [`crate::pending::number_pending`] on a diesel-async connection: every committed row of
/// `rows` without a number, numbered with `spec`'s gapless numbers in short transactions.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::prelude::*;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
/// use diesel_async::{AsyncConnection, RunQueryDsl};
/// use diesel_seqgen::pending::PendingRows;
///
/// # let dir = tempfile::tempdir()?;
/// # let url = dir.path().join("app.db").display().to_string();
/// let mut setup = SqliteConnection::establish(&url)?;
/// diesel_seqgen::run_migrations(&mut setup)?;
/// let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(&url).await?;
/// diesel::sql_query("CREATE TABLE invoices (id INTEGER PRIMARY KEY, number TEXT UNIQUE)").execute(&mut conn).await?;
/// diesel::sql_query("INSERT INTO invoices (number) VALUES (NULL), (NULL)").execute(&mut conn).await?;
///
/// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").pad(4).gapless().build()?;
/// let rows = PendingRows::new("invoices", "number", "id");
/// let done = diesel_seqgen::nonblocking::number_pending(&mut conn, &invoices, rows).await?;
/// assert_eq!(done.rows, 2);
/// # Ok(())
/// # }
/// ```
pub async fn number_pending<C>(conn: &mut C, spec: &Spec, rows: PendingRows<'_>) -> Result<Numbered>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    check(spec, &rows)?;
    let mut done = Numbered::default();
    let mut after = i64::MIN;
    loop {
        let batch = number_batch(conn, spec, &rows, after).await?;
        done.rows += batch.numbered;
        done.left += batch.left;
        match batch.last {
            Some(last) if batch.read >= rows.batch => after = last,
            _ => return Ok(done),
        }
    }
}

/// One short transaction, as the blocking one (`crate::pending`).
async fn number_batch<C>(
    conn: &mut C,
    spec: &Spec,
    rows: &PendingRows<'_>,
    after: i64,
) -> Result<Batch>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    C::Backend::read_committed_next(&mut NonBlocking(conn)).await?;
    begin(conn).await?;
    let result = async {
        let read = read_batch(&mut NonBlocking(conn), spec, rows, after).await?;
        if read.is_empty() {
            return Ok(read.outcome(0));
        }
        let generator = super::free::default_generator(conn).await?;
        write_batch(&mut NonBlocking(conn), generator.as_ref(), spec, rows, read).await
    }
    .await;
    end(conn, result).await
}
