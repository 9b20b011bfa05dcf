//! Gapless numbers on a PostgreSQL primary that replicates asynchronously, on servers of the
//! test's own (`servers.rs`): a failover there can lose the last numbers taken, and the
//! promoted standby would hand them out again, so a gapless key is refused until the primary
//! waits for its standby, or the user accepts the risk.
#![cfg(feature = "postgres")]

use crate::servers::PgCluster;

use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::{Error, Generator, Spec};

/// Waits until the primary lists a standby.
fn wait_for_standby(conn: &mut PgConnection) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let listed: bool = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
            "EXISTS (SELECT 1 FROM pg_stat_replication)",
        ))
        .get_result(conn)
        .unwrap();
        if listed {
            return;
        }
        assert!(Instant::now() < deadline, "the standby never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn gapless_keys_are_refused_on_an_asynchronous_primary() {
    let Some(cluster) = PgCluster::new("replication") else {
        return;
    };
    let primary = cluster.primary("primary", false);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", primary.port);
    let mut conn = PgConnection::establish(&url).unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let invoices = Spec::builder("invoices")
        .date("")
        .gapless()
        .build()
        .unwrap();
    let orders = Spec::builder("orders").date("").build().unwrap();
    let gapless = |conn: &mut PgConnection, generator: &Generator| {
        conn.transaction(|conn| generator.next_number(conn, &invoices))
    };

    // No standby: nothing for a failover to lose.
    assert_eq!(gapless(&mut conn, &Generator::new()).unwrap(), 1);

    let _standby = cluster.standby("standby", &primary);
    wait_for_standby(&mut conn);
    // A generator checks with a key's first number: new ones, and the default one, refuse.
    let refused = gapless(&mut conn, &Generator::new());
    assert!(
        matches!(&refused, Err(Error::AsyncReplication { key }) if key == "invoices"),
        "{refused:?}"
    );
    let refused = conn.transaction(|conn| diesel_seqgen::global::next_number(conn, &invoices));
    assert!(
        matches!(refused, Err(Error::AsyncReplication { .. })),
        "{refused:?}"
    );
    // Batched keys are not refused (the guarantees say what an asynchronous failover can
    // still cost them).
    assert_eq!(Generator::new().next_number(&mut conn, &orders).unwrap(), 1);
    // Accepted by the user (the opt-in is the point here; the refusals above are the defaults'
    // twin): the number the refusals did not take.
    let accepting = Generator::builder().accept_async_replication().build();
    assert_eq!(gapless(&mut conn, &accepting).unwrap(), 2);

    // The primary made to wait for its standby: gapless numbers go on, refused by no one.
    // Two statements: a batch of them runs as one transaction, where ALTER SYSTEM cannot.
    conn.batch_execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
        .unwrap();
    conn.batch_execute("SELECT pg_reload_conf()").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let number = loop {
        match gapless(&mut conn, &Generator::new()) {
            Err(Error::AsyncReplication { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50)); // the reload is asynchronous
            }
            other => break other.unwrap(),
        }
    };
    assert_eq!(number, 3);
}
