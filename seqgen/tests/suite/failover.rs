//! PostgreSQL failover, on servers of the test's own (`servers.rs`): a primary with a
//! synchronous standby, the primary crashed and the standby promoted, then the old primary
//! restarted writable beside it (a split brain), all through one multi-host URL. The
//! promoted server is the same database and the app goes on there; the old primary, on an
//! older timeline, is refused, by the generator that saw the failover and by every other of
//! the process.
#![cfg(feature = "postgres")]

use crate::servers::PgCluster;

use diesel::{Connection, PgConnection};
use seqgen::{Error, Generator, Spec};

/// An undated key on the defaults: blocks of the spec's default batch (100), growing.
fn spec(key: &str) -> Spec {
    Spec::builder(key)
        .prefix("F")
        .date("")
        .pad(6)
        .build()
        .unwrap()
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
    seqgen::run_migrations(&mut conn).unwrap();
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
    // Another generator (another instance) goes on there too, right after the block the
    // first one reserved there.
    let reserved = seqgen::global::last_value(&mut promoted, &orders)
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
            seqgen::global::next_ids(&mut old, &orders, 1),
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
    // The promoted server is still served, from where it was.
    assert_eq!(
        generator.next_id(&mut promoted, &invoices).unwrap(),
        "F000102"
    );
}
