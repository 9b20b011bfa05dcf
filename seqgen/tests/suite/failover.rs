//! PostgreSQL failover, on servers of the test's own (`servers.rs`): a primary with a
//! synchronous standby, the primary crashed and the standby promoted, then the old primary
//! restarted writable beside it (a split brain), all through one multi-host URL. The
//! promoted server is the same database and the app goes on there; the old primary, on an
//! older timeline, is refused, by the generator that saw the failover and by every other of
//! the process, for batched and gapless numbers alike.
#![cfg(feature = "postgres")]

use crate::servers::PgCluster;

use diesel::{Connection, PgConnection, RunQueryDsl};
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

diesel::table! {
    receipts (number) {
        number -> Text,
    }
}

/// Gapless, numbered by the insert statement itself once its key is known (`one_statement.rs`).
#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = receipts)]
struct Receipt {
    #[distributed_id(key = "failover_receipt", prefix = "R", date = "", pad = 4, gapless)]
    number: String,
}

/// One receipt inserted in a transaction of its own, by the default generator: its number.
fn receipt(conn: &mut PgConnection) -> Result<String, Error> {
    conn.transaction(|conn| {
        let mut receipt = Receipt {
            number: String::new(),
        };
        diesel_seqgen::insert_into(receipts::table)
            .values(&mut receipt)
            .execute(conn)?;
        Ok(receipt.number)
    })
}

/// The receipts on the server `conn` reaches.
fn receipts(conn: &mut PgConnection) -> Vec<String> {
    use diesel::QueryDsl;
    receipts::table
        .select(receipts::number)
        .order(receipts::number)
        .load(conn)
        .unwrap()
}

/// An undated key on the defaults: blocks of the spec's default batch (100), growing.
fn spec(key: &str) -> Spec {
    Spec::builder(key)
        .prefix("F")
        .date("")
        .pad(6)
        .build()
        .unwrap()
}

/// A gapless key, two digits.
fn gapless(key: &str) -> Spec {
    Spec::builder(key)
        .prefix("T")
        .date("")
        .pad(2)
        .gapless()
        .build()
        .unwrap()
}

/// One number of the gapless `spec` in a transaction of its own.
fn ticket(generator: &Generator, conn: &mut PgConnection, spec: &Spec) -> Result<String, Error> {
    conn.transaction(|conn| generator.next_id(conn, spec))
}

/// The port of the server `conn` reached.
fn port_of(conn: &mut PgConnection) -> u16 {
    use diesel::RunQueryDsl;
    let port: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "current_setting('port')",
    ))
    .get_result(conn)
    .unwrap();
    port.parse().unwrap()
}

#[test]
fn a_promoted_standby_goes_on_and_the_old_primary_is_refused() {
    let Some(cluster) = PgCluster::new("failover") else {
        return;
    };
    let primary = cluster.primary("primary", true);
    let standby = cluster.standby("standby", &primary);
    // How an app names both servers: libpq tries them in order, keeping the first that
    // accepts writes.
    let both = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port, standby.port
    );
    let mut conn = PgConnection::establish(&both).unwrap();
    assert_eq!(port_of(&mut conn), primary.port);
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    diesel::sql_query("CREATE TABLE receipts (number TEXT PRIMARY KEY)")
        .execute(&mut conn)
        .unwrap();
    // Gapless numbers by both paths: the first learns the key, the second is one statement;
    // and by a generator's `next_id` in a transaction.
    assert_eq!(receipt(&mut conn).unwrap(), "R0001");
    assert_eq!(receipt(&mut conn).unwrap(), "R0002");
    let tickets = gapless("tickets");
    assert_eq!(
        ticket(&Generator::new(), &mut conn, &tickets).unwrap(),
        "T01"
    );
    let (orders, invoices) = (spec("orders"), spec("invoices"));
    let generator = Generator::new();
    // Blocks 1..=100 of both keys, three numbers of each served.
    assert_eq!(
        generator.next_ids(&mut conn, &orders, 3).unwrap()[2],
        "F000003"
    );
    assert_eq!(
        generator.next_ids(&mut conn, &invoices, 3).unwrap()[2],
        "F000003"
    );
    drop(conn);

    primary.crash();
    standby.promote();
    // The same URL now reaches the promoted standby.
    let mut promoted = PgConnection::establish(&both).unwrap();
    assert_eq!(port_of(&mut promoted), standby.port);
    // The rest of the cached block is served (no round trip), then the first reservation on
    // the promoted server sees the new timeline.
    let orders_ids = generator.next_ids(&mut promoted, &orders, 98).unwrap();
    assert_eq!(orders_ids[0], "F000004");
    assert_eq!(orders_ids[97], "F000101", "reserved on the promoted server");
    // That reservation dropped what the generator held from before the failover: the
    // invoices' 4..=100 are holes, and their next block is reserved on the promoted server.
    assert_eq!(
        generator.next_id(&mut promoted, &invoices).unwrap(),
        "F000101"
    );
    // Gapless numbers go on there, from a synchronous standby that has them all.
    assert_eq!(receipt(&mut promoted).unwrap(), "R0003");
    assert_eq!(
        ticket(&Generator::new(), &mut promoted, &tickets).unwrap(),
        "T02"
    );
    // Another generator (another instance) goes on there too, right after the block the
    // first one reserved there.
    let reserved = diesel_seqgen::global::last_value(&mut promoted, &orders)
        .unwrap()
        .unwrap();
    let other = Generator::new().next_id(&mut promoted, &orders).unwrap();
    assert_eq!(other, format!("F{:06}", reserved + 1));

    // The old primary comes back writable on its old timeline (its standby gone, an operator
    // clears the wait for one), with the same system identifier, database and token, and the
    // same URL reaches it first again. Numbers cached from the promoted server stay good (the
    // cached path does not touch the database); the first reservation there is refused.
    primary.configure("synchronous_standby_names = ''\n");
    primary.start();
    let mut old = PgConnection::establish(&both).unwrap();
    assert_eq!(port_of(&mut old), primary.port);
    // More than any block the generator holds of the orders: a reservation.
    let beyond_cache = 1_000;
    for (who, result) in [
        (
            "the generator",
            generator.next_ids(&mut old, &orders, beyond_cache),
        ),
        (
            "a new generator",
            Generator::new().next_ids(&mut old, &orders, 1),
        ),
        (
            "the default one",
            diesel_seqgen::global::next_ids(&mut old, &orders, 1),
        ),
    ] {
        match result {
            Err(Error::OldTimeline {
                timeline: 1,
                highest: 2,
            }) => {}
            other => panic!("{who} on the old primary: {other:?}"),
        }
    }
    // Gapless numbers too, by the insert's one statement and by the usual path, and nothing
    // is written: the old primary would hand out R0003 and T02 again.
    for (who, result) in [
        ("a gapless insert", receipt(&mut old)),
        (
            "a gapless number",
            ticket(&Generator::new(), &mut old, &tickets),
        ),
    ] {
        match result {
            Err(Error::OldTimeline {
                timeline: 1,
                highest: 2,
            }) => {}
            other => panic!("{who} on the old primary: {other:?}"),
        }
    }
    assert_eq!(receipts(&mut old), ["R0001", "R0002"]);
    // The promoted server is still served, from where it was.
    assert_eq!(
        generator.next_id(&mut promoted, &invoices).unwrap(),
        "F000102"
    );
    assert_eq!(receipt(&mut promoted).unwrap(), "R0004");
    assert_eq!(
        receipts(&mut promoted),
        ["R0001", "R0002", "R0003", "R0004"]
    );
}
