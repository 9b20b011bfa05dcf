//! Repository functions generic over the connection, written with seqgen's public bounds only
//! (`diesel_seqgen::IdConnection`, `diesel_seqgen::MigrateConnection`,
//! `diesel_seqgen::insert::{Insert, InsertReturning}`; issues 30 and 47), compiled for every
//! backend and run against each one's database. The README's generic example shows the same
//! `where` clauses.

use crate::common;

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::DistributedId;

diesel::table! {
    users (id) {
        id -> Text,
        name -> Text,
    }
}

#[derive(Insertable, Queryable, DistributedId, Debug)]
#[diesel(table_name = users)]
struct NewUser {
    #[distributed_id(key = "generic_users", prefix = "U", date = "", pad = 6)]
    id: String,
    name: String,
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = users)]
struct NewInvoice {
    #[distributed_id(key = "generic_invoices", prefix = "INV", date = "", pad = 6, gapless)]
    id: String,
    name: String,
}

/// Inserts rows with their IDs, the way a repository does it on any of seqgen's databases.
fn save<C>(conn: &mut C, rows: &mut Vec<NewUser>) -> diesel_seqgen::Result<usize>
where
    C: diesel_seqgen::IdConnection,
    Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>,
{
    diesel_seqgen::insert_into(users::table)
        .values(rows)
        .execute(conn)
}

/// Sets a new database up, then saves `rows`: one bound for both.
fn set_up_and_save<C>(conn: &mut C, rows: &mut Vec<NewUser>) -> diesel_seqgen::Result<usize>
where
    C: diesel_seqgen::MigrateConnection,
    Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>,
{
    diesel_seqgen::run_migrations(conn)?;
    conn.batch_execute(
        "CREATE TABLE users (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) NOT NULL)",
    )?;
    diesel_seqgen::insert_into(users::table)
        .values(rows)
        .execute(conn)
}

/// A gapless insert, one record: the same bound.
fn save_invoice<C>(conn: &mut C, invoice: &mut NewInvoice) -> diesel_seqgen::Result<usize>
where
    C: diesel_seqgen::IdConnection,
    NewInvoice: diesel_seqgen::insert::Insert<users::table, C>,
{
    diesel_seqgen::insert_into(users::table)
        .values(invoice)
        .execute(conn)
}

/// Inserts and loads the row back (`RETURNING`: PostgreSQL and SQLite).
fn save_returning<C>(conn: &mut C, row: &mut NewUser) -> diesel_seqgen::Result<NewUser>
where
    C: diesel_seqgen::IdConnection,
    NewUser: diesel_seqgen::insert::InsertReturning<users::table, C, NewUser>,
{
    diesel_seqgen::insert_into(users::table)
        .values(row)
        .get_result(conn)
}

/// Fills the IDs only (the default generator, then one of the app's own).
fn fill<C: diesel_seqgen::IdConnection>(
    conn: &mut C,
    rows: &mut [NewUser],
) -> diesel_seqgen::Result<()> {
    diesel_seqgen::assign_ids(conn, &mut rows[..1])?;
    diesel_seqgen::Generator::new().assign_ids(conn, &mut rows[1..])
}

fn user(name: &str) -> NewUser {
    NewUser {
        id: String::new(),
        name: name.to_owned(),
    }
}

/// A database of its own with the `users` table.
fn database<C: TestConnection>(db: &TestDb<C>) -> common::Scratch<'_, C> {
    let table = "CREATE TABLE users (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) NOT NULL)";
    common::scratch_with_table(db, "generic", table, None)
}

backend_tests!(
    the_generic_repository_works_on_every_backend,
    a_generic_function_migrates_and_inserts,
);

/// A database with nothing in it, set up and written to by one generic function.
fn a_generic_function_migrates_and_inserts<C>(db: TestDb<C>)
where
    C: TestConnection,
    Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>,
{
    let fresh = db.scratch("generic_setup");
    let mut conn = fresh.connect();
    let mut rows = vec![user("a"), user("b")];
    assert_eq!(set_up_and_save(&mut conn, &mut rows).unwrap(), 2);
    assert_eq!([rows[0].id.as_str(), &rows[1].id], ["U000001", "U000002"]);
}

fn the_generic_repository_works_on_every_backend<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>,
    NewInvoice: diesel_seqgen::insert::Insert<users::table, C>,
    for<'a> users::table: diesel::query_dsl::methods::LoadQuery<'a, C, (String, String)>,
{
    let scratch = database(&db);
    let mut conn = scratch.connect();

    let mut rows = vec![user("a"), user("b")];
    assert_eq!(save(&mut conn, &mut rows).unwrap(), 2);
    assert_eq!([rows[0].id.as_str(), &rows[1].id], ["U000001", "U000002"]);

    let mut invoice = NewInvoice {
        id: String::new(),
        name: "i".to_owned(),
    };
    conn.transaction(|conn| save_invoice(conn, &mut invoice))
        .unwrap();
    assert_eq!(invoice.id, "INV000001");

    let mut filled = vec![user("c"), user("d")];
    fill(&mut conn, &mut filled).unwrap();
    assert!(
        filled.iter().all(|row| row.id.starts_with('U')),
        "{filled:?}"
    );
    assert_ne!(filled[0].id, filled[1].id);

    let mut stored: Vec<String> = users::table
        .load::<(String, String)>(&mut conn)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    stored.sort();
    assert_eq!(stored, ["INV000001", "U000001", "U000002"]);
}

/// `get_result` through the generic function, where the backend has `RETURNING`.
fn returning<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    NewUser: diesel_seqgen::insert::InsertReturning<users::table, C, NewUser>,
{
    let scratch = database(&db);
    let mut conn = scratch.connect();
    let stored = save_returning(&mut conn, &mut user("r")).unwrap();
    assert_eq!((stored.id.as_str(), stored.name.as_str()), ("U000001", "r"));
}

#[cfg(feature = "sqlite")]
#[test]
fn get_result_on_sqlite() {
    if let Some(db) = TestDb::<diesel::SqliteConnection>::open("generic_returning") {
        returning(db);
    }
}

#[cfg(feature = "postgres")]
#[test]
fn get_result_on_postgres() {
    if let Some(db) = TestDb::<diesel::PgConnection>::open("generic_returning") {
        returning(db);
    }
}
