//! A transaction the database aborts after its insert went through (a Galera certification
//! failure at the commit, a deadlock on a later statement, a serialization failure), run again
//! by `retry_transaction` with the same records: the retry takes its gapless numbers again,
//! on every connection form, after `use_pool` as the README starts an app. Found by the
//! nemesis on a Galera cluster (`tools/src/nemesis`, seed 59): the records kept the number of
//! the attempt that rolled back, the retry inserted it again after another node's transaction
//! had taken it, and only the table's primary key stopped the duplicate. Batched IDs a rolled
//! back attempt filled may be kept: no one else is ever handed them.

use crate::common;

use common::{TestConnection, TestDb};
use diesel::r2d2::{ConnectionManager, PooledConnection};
use diesel_seqgen::insert::Insert;
use diesel_seqgen::{DistributedId, Error, Generator};

diesel::table! {
    tickets (id) {
        id -> Text,
        note -> Text,
    }
}

diesel::table! {
    invoices (id) {
        id -> Text,
        note -> Text,
    }
}

#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = tickets)]
struct Ticket {
    #[distributed_id(prefix = "T", date = "", pad = 6)]
    id: String,
    note: String,
}

#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = invoices)]
struct Invoice {
    #[distributed_id(prefix = "I", date = "", pad = 6, gapless)]
    id: String,
    note: String,
}

backend_tests!(a_retried_transaction_takes_its_gapless_numbers_again_on_every_form);

type Pooled<C> = PooledConnection<ConnectionManager<C>>;

const FORMS: [&str; 4] = ["plain", "&mut pooled", "&mut *pooled", "own generator"];

/// What the database says when it aborts a transaction at its commit, as seqgen reports it.
fn aborted() -> Error {
    Error::TransactionConflict(diesel::result::Error::DatabaseError(
        diesel::result::DatabaseErrorKind::SerializationFailure,
        Box::new("certification failed at the commit".to_owned()),
    ))
}

fn a_retried_transaction_takes_its_gapless_numbers_again_on_every_form<C>(db: TestDb<C>)
where
    C: TestConnection,
    Vec<Ticket>: Insert<tickets::table, C> + Insert<tickets::table, Pooled<C>>,
    Vec<Invoice>: Insert<invoices::table, C> + Insert<invoices::table, Pooled<C>>,
{
    let scratch = common::scratch_with_table(
        &db,
        "retried_insert",
        "CREATE TABLE tickets (id VARCHAR(20) PRIMARY KEY, note VARCHAR(60) NOT NULL); \
         CREATE TABLE invoices (id VARCHAR(20) PRIMARY KEY, note VARCHAR(60) NOT NULL)",
        None,
    );
    diesel_seqgen::global::use_pool(scratch.pool(3)).unwrap();
    let pool = scratch.pool(2);
    let own = Generator::new();
    let mut plain = scratch.connect();
    let (mut invoices, mut tickets) = (Vec::new(), Vec::new());
    for (i, form) in FORMS.iter().enumerate() {
        for round in 0..2 {
            let mut pooled = pool.get().unwrap();
            let note = format!("{form} {round}");
            // Two records of each per transaction, aborted once after their insert, retried.
            let mut invoice = vec![Invoice::new(&note), Invoice::new(&note)];
            let mut ticket = vec![Ticket::new(&note), Ticket::new(&note)];
            let records = (&mut invoice, &mut ticket);
            let attempts = match i {
                0 => retried(&mut plain, None, records),
                1 => retried(&mut pooled, None, records),
                2 => retried(&mut *pooled, None, records),
                _ => retried(&mut *pooled, Some(&own), records),
            };
            let attempts = attempts.unwrap_or_else(|e| panic!("{form}, round {round}: {e}"));
            assert_eq!(attempts, 2, "{form}");
            invoices.extend(invoice.into_iter().map(|r| r.id));
            tickets.extend(ticket.into_iter().map(|r| r.id));
        }
    }
    // Every retried transaction's invoices took the next numbers: exactly 1..N, each once.
    let mut ids = C::texts(&mut scratch.connect(), "SELECT id AS text FROM invoices");
    ids.sort();
    let expected: Vec<String> = (1..=invoices.len()).map(|n| format!("I{n:06}")).collect();
    assert_eq!(ids, expected);
    invoices.sort();
    assert_eq!(invoices, expected, "the records hold what was committed");
    // Tickets: each committed once, whatever number the aborted attempt left.
    let mut ids = C::texts(&mut scratch.connect(), "SELECT id AS text FROM tickets");
    ids.sort();
    ids.dedup();
    tickets.sort();
    assert_eq!(ids, tickets);
}

/// Inserts the records in a transaction the database aborts after the inserts the first
/// time, run again by `retry_transaction`: how many attempts it took.
fn retried<Conn>(
    conn: &mut Conn,
    generator: Option<&Generator>,
    (invoice, ticket): (&mut Vec<Invoice>, &mut Vec<Ticket>),
) -> diesel_seqgen::Result<usize>
where
    Conn: diesel_seqgen::IdConnection,
    Vec<Invoice>: Insert<invoices::table, Conn>,
    Vec<Ticket>: Insert<tickets::table, Conn>,
{
    let mut attempts = 0;
    diesel_seqgen::retry_transaction(conn, |conn| {
        let (a, b) = (
            diesel_seqgen::insert_into(invoices::table).values(&mut *invoice),
            diesel_seqgen::insert_into(tickets::table).values(&mut *ticket),
        );
        match generator {
            Some(g) => {
                a.with_generator(g).execute(conn)?;
                b.with_generator(g).execute(conn)?;
            }
            None => {
                a.execute(conn)?;
                b.execute(conn)?;
            }
        }
        attempts += 1;
        match attempts {
            1 => Err(aborted()),
            _ => Ok(()),
        }
    })?;
    Ok(attempts)
}

impl Invoice {
    fn new(note: &str) -> Self {
        Invoice {
            id: String::new(),
            note: note.to_owned(),
        }
    }
}

impl Ticket {
    fn new(note: &str) -> Self {
        Ticket {
            id: String::new(),
            note: note.to_owned(),
        }
    }
}
