//! A MariaDB Galera cluster is one database: a cluster of the test's own
//! (`galera_cluster.rs`), migrations run from every node at once, one generator whose
//! connections move between nodes, several writers per node on small fixed blocks, whose
//! certification conflicts are retried, and a node cut off and healed. Every ID is checked
//! afterwards.

use crate::common;
use crate::galera_cluster::GaleraCluster;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use common::assert_distinct;
use diesel::connection::SimpleConnection as _;
use diesel::{Connection as _, MysqlConnection, RunQueryDsl};
use diesel_seqgen::{Generator, Spec};

#[test]
fn a_galera_cluster_is_one_database() {
    let Some(cluster) = GaleraCluster::start("a_galera_cluster_is_one_database", 3) else {
        return;
    };
    // It takes 20-40 s; once, in a soak run, it hung until nextest's timeout (180 s for it,
    // `.config/nextest.toml`) with nothing printed: past 150 s its watchdog shows the nodes.
    let _watchdog = cluster.watchdog("a_galera_cluster_is_one_database", Duration::from_secs(150));
    let urls: Arc<Vec<String>> = Arc::new((0..3).map(|node| cluster.url(node)).collect());

    let started = Instant::now();
    // 1. Migrations from two processes' worth of connections on each node, all at once.
    let barrier = Arc::new(Barrier::new(6));
    let migrating: Vec<_> = (0..6)
        .map(|i| {
            let (urls, barrier) = (urls.clone(), barrier.clone());
            thread::spawn(move || {
                // Past the barrier whatever happens: a thread that panicked before it would
                // leave the others waiting for ever.
                let conn = MysqlConnection::establish(&urls[i % 3]);
                barrier.wait();
                let mut conn = conn.map_err(|e| format!("node {}: connecting: {e}", i % 3))?;
                diesel_seqgen::run_migrations(&mut conn).map_err(|e| {
                    // With its causes: the point of the error is to say why.
                    let mut why = format!("node {}: {e}", i % 3);
                    let mut source = std::error::Error::source(&e);
                    while let Some(cause) = source {
                        why.push_str(&format!(": {cause}"));
                        source = cause.source();
                    }
                    why
                })
            })
        })
        .collect();
    let failed: Vec<String> = migrating
        .into_iter()
        .filter_map(|t| t.join().unwrap().err())
        .collect();
    assert!(failed.is_empty(), "migrations failed: {failed:#?}");
    // They took turns (`backend/mysql/migrate.rs`: at once, MariaDB can hang a node on the
    // trigger's metadata lock), and the last gave the lease back. Read causally: a node
    // applies the others' commits a moment after they return, so without `wsrep_sync_wait`
    // node 0 may not have applied a lease's DELETE made on node 1 yet (a soak run saw 1).
    let mut conn = MysqlConnection::establish(&urls[0]).unwrap();
    conn.batch_execute("SET SESSION wsrep_sync_wait = 1")
        .unwrap();
    let leases: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
        "(SELECT COUNT(*) FROM db_key_migration_lease)",
    ))
    .get_result(&mut conn)
    .unwrap();
    assert_eq!(leases, 0, "a lease left behind");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "migrations waited for a lease to expire"
    );

    // 2. One generator whose connections move from node to node (a pool across nodes, or a
    // failover): the nodes are one database, and the IDs continue.
    let spec = Spec::builder("galera_moves").date("").build().unwrap();
    let generator = Generator::new();
    let mut moved = Vec::new();
    for round in 0..6 {
        let mut conn = MysqlConnection::establish(&urls[round % 3]).unwrap();
        let ids = generator
            .next_ids(&mut conn, &spec, 150)
            .unwrap_or_else(|e| panic!("round {round}, node {}: {e}", round % 3));
        moved.extend(ids);
    }
    assert_distinct(&moved);

    // 3. Two writers per node, each its own generator (an app instance) on blocks of 10:
    // conflicting reservations on the three nodes are retried, none gives up. (Small fixed
    // blocks are the point here; the twin on the defaults is
    // `tools/tests/galera_faults.rs`'s writers on every node.)
    const IDS: usize = 1_000;
    let busy = Spec::builder("galera_busy")
        .date("")
        .batch(10)
        .build()
        .unwrap();
    let writers: Vec<_> = (0..6)
        .map(|i| {
            let (urls, busy) = (urls.clone(), busy.clone());
            thread::spawn(move || {
                let mut conn = MysqlConnection::establish(&urls[i % 3]).unwrap();
                let generator = Generator::builder().fixed_batch().build();
                let ids: Result<Vec<String>, _> = (0..IDS)
                    .map(|_| generator.next_id(&mut conn, &busy))
                    .collect();
                let retries: u64 = generator.stats().iter().map(|s| s.retries).sum();
                (
                    ids.map_err(|e| format!("writer {i} on node {}: {e}", i % 3)),
                    retries,
                )
            })
        })
        .collect();
    let (mut ids, mut failed, mut retries) = (Vec::new(), Vec::new(), 0);
    for writer in writers {
        let (result, repeated) = writer.join().unwrap();
        retries += repeated;
        match result {
            Ok(taken) => ids.extend(taken),
            Err(e) => failed.push(e),
        }
    }
    println!(
        "galera: {} IDs by 6 writers on 3 nodes, {retries} reservations repeated after a \
         conflict, {} writers failed",
        ids.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(ids.len(), 6 * IDS);
    assert_distinct(&ids);

    // 4. A node cut off from the others (`gmcast.isolate`) is refused with a clear error and
    // reserves nothing; the others go on; healed, it goes on too.
    let spec = Spec::builder("galera_cut").date("").build().unwrap();
    let (mut on_cut, mut on_other) = (
        MysqlConnection::establish(&urls[2]).unwrap(),
        MysqlConnection::establish(&urls[0]).unwrap(),
    );
    let (cut, other) = (Generator::new(), Generator::new());
    let mut taken = vec![cut.next_id(&mut on_cut, &spec).unwrap()];
    cluster.sql(2, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'");
    let deadline = Instant::now() + Duration::from_secs(30);
    while cluster
        .try_sql(2, "SHOW STATUS LIKE 'wsrep_cluster_status'")
        .is_some_and(|status| status.contains("\tPrimary"))
    {
        assert!(Instant::now() < deadline, "node 2 still primary after 30 s");
        thread::sleep(Duration::from_millis(100));
    }
    // Its block is served from memory (reserved on the whole cluster); the next reservation
    // is refused.
    let refused = cut.next_ids(&mut on_cut, &spec, 200);
    assert!(
        matches!(refused, Err(diesel_seqgen::Error::NodeOutOfCluster(_))),
        "{refused:?}"
    );
    taken.extend(other.next_ids(&mut on_other, &spec, 200).unwrap());
    cluster.sql(2, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'");
    cluster.wait_synced(2);
    taken.extend(cut.next_ids(&mut on_cut, &spec, 200).unwrap());
    assert_distinct(&taken);
}
