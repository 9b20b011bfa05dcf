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
    // A standby that just connected, as after a failover: a generator waits for the primary
    // to name a synchronous standby (Patroni does so a loop after its promotion) instead of
    // refusing at once, and goes on when it does.
    let naming = std::thread::spawn({
        let url = url.clone();
        move || {
            std::thread::sleep(Duration::from_secs(2));
            set_synchronous_standbys(&url, "'*'");
        }
    });
    let started = Instant::now();
    assert_eq!(gapless(&mut conn, &Generator::new()).unwrap(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "it did not wait"
    );
    naming.join().unwrap();
    // None named: refused once the standby has been connected for 15 s, and at once after.
    set_synchronous_standbys(&url, "''");
    let started = Instant::now();
    let refused = gapless(&mut conn, &Generator::new());
    assert!(
        matches!(&refused, Err(Error::AsyncReplication { key }) if key == "invoices"),
        "{refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let started = Instant::now();
    // A generator checks with a key's first number: new ones, and the default one, refuse.
    let refused = gapless(&mut conn, &Generator::new());
    assert!(
        matches!(&refused, Err(Error::AsyncReplication { key }) if key == "invoices"),
        "{refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
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
    assert_eq!(gapless(&mut conn, &accepting).unwrap(), 3);

    // The primary made to wait for its standby: gapless numbers go on, refused by no one.
    set_synchronous_standbys(&url, "'*'");
    let deadline = Instant::now() + Duration::from_secs(10);
    let number = loop {
        match gapless(&mut conn, &Generator::new()) {
            Err(Error::AsyncReplication { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50)); // the reload is asynchronous
            }
            other => break other.unwrap(),
        }
    };
    assert_eq!(number, 4);
}

/// Sets `synchronous_standby_names` to `value` (SQL) on the server at `url`, and reloads. Two
/// statements: a batch of them runs as one transaction, where ALTER SYSTEM cannot.
fn set_synchronous_standbys(url: &str, value: &str) {
    let mut conn = PgConnection::establish(url).unwrap();
    conn.batch_execute(&format!(
        "ALTER SYSTEM SET synchronous_standby_names = {value}"
    ))
    .unwrap();
    conn.batch_execute("SELECT pg_reload_conf()").unwrap();
    // The reload is asynchronous: once a new session sees the value, the postmaster has read
    // it and signalled every backend, which takes it before its next statement.
    let want = value.trim_matches('\'');
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut fresh = PgConnection::establish(url).unwrap();
        let now: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
            "current_setting('synchronous_standby_names')",
        ))
        .get_result(&mut fresh)
        .unwrap();
        if now == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "synchronous_standby_names stayed {now:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process that lived through a failover is checked on the new primary as a new one is: a
/// generator took gapless numbers on a primary waiting for its standby; that standby is
/// promoted, with a standby of its own that it does not wait for (a cascading one, now
/// streaming from it). The generator's next gapless number is refused there, on a new session
/// (`reserve_in_transaction`) and on one a batched reservation checked first (`gapless.rs`).
#[test]
fn a_generator_that_lived_through_a_failover_is_checked_again() {
    let Some(cluster) = PgCluster::new("replication_failover") else {
        return;
    };
    let primary = cluster.primary("primary", true);
    let standby = cluster.standby("standby", &primary);
    let cascading = cluster.standby("cascading", &standby);
    let url = |server: &crate::servers::PgServer<'_>| {
        format!("postgres://postgres@127.0.0.1:{}/postgres", server.port)
    };
    let mut conn = PgConnection::establish(&url(&primary)).unwrap();
    wait_for_standby(&mut conn);
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let invoices = Spec::builder("invoices")
        .date("")
        .gapless()
        .build()
        .unwrap();
    let generator = Generator::new();
    let gapless =
        |conn: &mut PgConnection| conn.transaction(|conn| generator.next_number(conn, &invoices));
    assert_eq!(gapless(&mut conn).unwrap(), 1);

    primary.crash();
    standby.promote();
    let mut promoted = PgConnection::establish(&url(&standby)).unwrap();
    wait_for_standby(&mut promoted);
    // A batched block first, on the same session and in a transaction: it checks the session
    // (the new timeline) and marks it, so the gapless statement that follows would take its
    // number there without asking. The generator asks again after the failover it saw.
    let orders = Spec::builder("orders").date("").build().unwrap();
    (promoted.transaction(|conn| generator.next_number(conn, &orders))).unwrap();
    let refused = gapless(&mut promoted);
    assert!(
        matches!(&refused, Err(Error::AsyncReplication { key }) if key == "invoices"),
        "{refused:?}"
    );
    drop(cascading);
}
