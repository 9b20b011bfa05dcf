//! The tables after a run, as the checker reads them: every row of `loadgen_rows` and
//! `loadgen_pending`, and every counter of `db_key`.

use diesel::connection::LoadConnection;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::{BigInt, Text};
use diesel::{Connection, QueryableByName, RunQueryDsl};

use super::check::Tables;

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    key_name: String,
    #[diesel(sql_type = Text)]
    id: String,
}

#[derive(QueryableByName)]
struct Pending {
    #[diesel(sql_type = Text)]
    key_name: String,
    #[diesel(sql_type = Text)]
    token: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    number: Option<String>,
}

#[derive(QueryableByName)]
struct Counter {
    #[diesel(sql_type = Text)]
    key_name: String,
    #[diesel(sql_type = Text)]
    scope: String,
    #[diesel(sql_type = Text)]
    period: String,
    #[diesel(sql_type = BigInt)]
    current_value: i64,
}

/// Numbers the rows of `loadgen_pending` at `url` still without one, as the apps' followers
/// would have: how many.
pub fn number_the_rest(url: &str) -> Result<u64, String> {
    if url.starts_with("postgres://") {
        #[cfg(feature = "postgres")]
        return number_on::<diesel::PgConnection>(url);
    }
    #[cfg(feature = "mysql")]
    if url.starts_with("mysql://") {
        return number_on::<diesel::MysqlConnection>(url);
    }
    Err(format!(
        "{url}: this build has no such backend (features postgres, mysql)"
    ))
}

fn number_on<C: diesel_seqgen::IdConnection>(url: &str) -> Result<u64, String> {
    use crate::loadgen::rows::{loadgen_pending, DeferredRow};
    use diesel_seqgen::pending;
    let mut conn = C::establish(url).map_err(|e| format!("{url}: {e}"))?;
    first(&mut conn, url)?;
    let (spec, rows) =
        pending::rows_of::<DeferredRow>(loadgen_pending::id).map_err(|e| e.to_string())?;
    let done = pending::number_pending(&mut conn, spec, rows).map_err(|e| e.to_string())?;
    Ok(done.rows)
}

/// The tables of the database at `url` (PostgreSQL or MySQL).
pub fn read(url: &str) -> Result<Tables, String> {
    if url.starts_with("postgres://") {
        #[cfg(feature = "postgres")]
        return read_on::<diesel::PgConnection>(url);
    }
    #[cfg(feature = "mysql")]
    if url.starts_with("mysql://") {
        return read_on::<diesel::MysqlConnection>(url);
    }
    Err(format!(
        "{url}: this build has no such backend (features postgres, mysql)"
    ))
}

/// What the checker's session runs first: on a Galera node, reads wait until the node
/// applied every write the cluster committed before them.
fn first<C: Connection>(conn: &mut C, url: &str) -> Result<(), String> {
    match url.starts_with("mysql://") {
        true => conn
            .batch_execute("SET SESSION wsrep_sync_wait = 1")
            .map_err(|e| format!("wsrep_sync_wait: {e}")),
        false => Ok(()),
    }
}

fn read_on<C>(url: &str) -> Result<Tables, String>
where
    C: Connection + LoadConnection,
    for<'a> diesel::query_builder::SqlQuery:
        LoadQuery<'a, C, Row> + LoadQuery<'a, C, Counter> + LoadQuery<'a, C, Pending>,
{
    let mut conn = C::establish(url).map_err(|e| format!("{url}: {e}"))?;
    first(&mut conn, url)?;
    let rows: Vec<Row> = diesel::sql_query("SELECT key_name, id FROM loadgen_rows")
        .load(&mut conn)
        .map_err(|e| format!("reading loadgen_rows: {e}"))?;
    let counters: Vec<Counter> =
        diesel::sql_query("SELECT key_name, scope, period, current_value FROM db_key")
            .load(&mut conn)
            .map_err(|e| format!("reading db_key: {e}"))?;
    let pending: Vec<Pending> =
        diesel::sql_query("SELECT key_name, token, number FROM loadgen_pending")
            .load(&mut conn)
            .map_err(|e| format!("reading loadgen_pending: {e}"))?;
    let mut tables = Tables::default();
    for row in pending {
        tables
            .pending
            .entry(row.key_name)
            .or_default()
            .push((row.token, row.number));
    }
    for row in rows {
        tables.rows.entry(row.key_name).or_default().push(row.id);
    }
    for c in counters {
        tables
            .counters
            .insert((c.key_name, c.scope, c.period), c.current_value);
    }
    Ok(tables)
}
