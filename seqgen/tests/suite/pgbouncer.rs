//! Through pgbouncer in transaction pooling (`servers.rs`: a PostgreSQL server and a
//! pgbouncer of the test's own, two server connections shared by every client), with
//! Diesel's prepared-statement cache disabled as pgbouncer needs: batched IDs, the derive's
//! insert (which asserts its database per session) and gapless numbers in transactions, from
//! four app instances at once. Consecutive transactions of one client land on different
//! server connections, so nothing may rely on session state.
#![cfg(feature = "postgres")]

use crate::common::assert_distinct;
use crate::servers::PgCluster;

use std::thread;

use diesel::connection::{CacheSize, SimpleConnection};
use diesel::prelude::*;
use diesel_seqgen::{DistributedId, Generator, Spec};

diesel::table! {
    bounced (id) {
        id -> Text,
    }
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = bounced)]
struct Bounced {
    #[distributed_id(key = "bounced", prefix = "B", date = "", pad = 6)]
    id: String,
}

#[test]
fn batched_and_gapless_through_transaction_pooling() {
    let Some(cluster) = PgCluster::new("pgbouncer") else {
        return;
    };
    let server = cluster.primary("primary", false);
    let Some(bouncer) = cluster.pgbouncer(&server) else {
        return;
    };
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", bouncer.port);
    let connect = move || {
        let mut conn = PgConnection::establish(&url).unwrap();
        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
        conn
    };
    let mut conn = connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    conn.batch_execute("CREATE TABLE bounced (id TEXT PRIMARY KEY)")
        .unwrap();

    const BATCHED: usize = 300;
    const GAPLESS: usize = 30;
    let gapless = Spec::builder("bounced_gapless")
        .date("")
        .gapless()
        .build()
        .unwrap();
    let batched = Spec::builder("bounced_batched").date("").build().unwrap();
    // Two instances with a generator of their own, two on the default one (which tells
    // databases apart per connection and marks sessions).
    let instances: Vec<_> = (0..4)
        .map(|i| {
            let (connect, gapless, batched) = (connect.clone(), gapless.clone(), batched.clone());
            thread::spawn(move || {
                let mut conn = connect();
                let own = (i % 2 == 0).then(Generator::new);
                let (mut ids, mut numbers) = (Vec::new(), Vec::new());
                for n in 0..BATCHED {
                    let id = match &own {
                        Some(generator) => generator.next_id(&mut conn, &batched),
                        None => diesel_seqgen::global::next_id(&mut conn, &batched),
                    };
                    ids.push(id.unwrap_or_else(|e| panic!("instance {i}, batched {n}: {e}")));
                    let mut row = Bounced { id: String::new() };
                    let inserted = match &own {
                        Some(generator) => diesel_seqgen::insert_into(bounced::table)
                            .values(&mut row)
                            .with_generator(generator)
                            .execute(&mut conn),
                        None => diesel_seqgen::insert_into(bounced::table)
                            .values(&mut row)
                            .execute(&mut conn),
                    };
                    inserted.unwrap_or_else(|e| panic!("instance {i}, insert {n}: {e}"));
                }
                for n in 0..GAPLESS {
                    let number = conn.transaction(|conn| match &own {
                        Some(generator) => generator.next_number(conn, &gapless),
                        None => diesel_seqgen::global::next_number(conn, &gapless),
                    });
                    numbers
                        .push(number.unwrap_or_else(|e| panic!("instance {i}, gapless {n}: {e}")));
                }
                (ids, numbers)
            })
        })
        .collect();
    let (mut ids, mut numbers) = (Vec::new(), Vec::new());
    for instance in instances {
        let (i, n) = instance.join().unwrap();
        ids.extend(i);
        numbers.extend(n);
    }
    assert_distinct(&ids);
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (1..=4 * GAPLESS as i64).collect::<Vec<_>>(),
        "gapless: 1..=N"
    );
    let rows: i64 = bounced::table.count().get_result(&mut conn).unwrap();
    assert_eq!(rows, 4 * BATCHED as i64);
    println!(
        "pgbouncer: {} batched IDs, {rows} rows inserted, gapless 1..={} by 4 instances",
        ids.len(),
        numbers.len()
    );
}
