//! A repository function generic over the connection, written with seqgen's public bounds
//! only (issue 30), and used with a connection of each backend.

use diesel::prelude::*;
use seqgen::DistributedId;

diesel::table! {
    users (id) {
        id -> Text,
        name -> Text,
    }
}

#[derive(Insertable, Queryable, DistributedId)]
#[diesel(table_name = users)]
struct NewUser {
    #[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6)]
    id: String,
    name: String,
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = users)]
struct NewInvoice {
    #[distributed_id(key = "invoices", prefix = "INV", date = "%Y", pad = 6, gapless)]
    id: String,
    name: String,
}

/// Inserts rows with their IDs, the way a repository does it on any of seqgen's databases.
fn save<C>(conn: &mut C, rows: &mut Vec<NewUser>) -> seqgen::Result<usize>
where
    C: seqgen::IdConnection,
    Vec<NewUser>: seqgen::insert::Insert<users::table, C>,
{
    seqgen::insert_into(users::table).values(rows).execute(conn)
}

/// A gapless insert, one record: the same bound.
fn save_invoice<C>(conn: &mut C, invoice: &mut NewInvoice) -> seqgen::Result<usize>
where
    C: seqgen::IdConnection,
    NewInvoice: seqgen::insert::Insert<users::table, C>,
{
    seqgen::insert_into(users::table).values(invoice).execute(conn)
}

/// Inserts and loads the row back (`RETURNING`).
fn save_returning<C>(conn: &mut C, row: &mut NewUser) -> seqgen::Result<NewUser>
where
    C: seqgen::IdConnection,
    NewUser: seqgen::insert::InsertReturning<users::table, C, NewUser>,
{
    seqgen::insert_into(users::table).values(row).get_result(conn)
}

/// Fills the IDs only; plain Diesel inserts afterwards.
fn fill<C: seqgen::IdConnection>(conn: &mut C, rows: &mut [NewUser]) -> seqgen::Result<()> {
    seqgen::assign_ids(rows, conn)?;
    let generator = seqgen::Generator::new();
    generator.assign_ids(rows, conn)
}

type Save<C> = fn(&mut C, &mut Vec<NewUser>) -> seqgen::Result<usize>;
type SaveInvoice<C> = fn(&mut C, &mut NewInvoice) -> seqgen::Result<usize>;
type Fill<C> = fn(&mut C, &mut [NewUser]) -> seqgen::Result<()>;

fn main() {
    // Each use type-checks the bounds for that backend; nothing connects.
    let _: Save<SqliteConnection> = save::<SqliteConnection>;
    let _: Save<PgConnection> = save::<PgConnection>;
    let _: Save<MysqlConnection> = save::<MysqlConnection>;
    let _: SaveInvoice<SqliteConnection> = save_invoice::<SqliteConnection>;
    let _: SaveInvoice<PgConnection> = save_invoice::<PgConnection>;
    let _: SaveInvoice<MysqlConnection> = save_invoice::<MysqlConnection>;
    let _ = save_returning::<SqliteConnection>;
    let _ = save_returning::<PgConnection>;
    let _: Fill<SqliteConnection> = fill::<SqliteConnection>;
    let _: Fill<PgConnection> = fill::<PgConnection>;
    let _: Fill<MysqlConnection> = fill::<MysqlConnection>;
}
