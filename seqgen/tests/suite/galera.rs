//! A MariaDB Galera cluster is one database: a cluster of the test's own
//! (`galera_cluster.rs`), migrations run from every node at once, one generator whose
//! connections move between nodes, and several writers per node on small fixed blocks, whose
//! certification conflicts are retried. Every ID is checked afterwards.

use crate::common;
use crate::galera_cluster::GaleraCluster;

use std::sync::{Arc, Barrier};
use std::thread;

use common::assert_distinct;
use diesel::{Connection as _, MysqlConnection};
use seqgen::{Generator, Spec};

#[test]
fn a_galera_cluster_is_one_database() {
    let Some(cluster) = GaleraCluster::start("a_galera_cluster_is_one_database", 3) else {
        return;
    };
    let urls: Arc<Vec<String>> = Arc::new((0..3).map(|node| cluster.url(node)).collect());

    // 1. Migrations from two processes' worth of connections on each node, all at once.
    let barrier = Arc::new(Barrier::new(6));
    let migrating: Vec<_> = (0..6)
        .map(|i| {
            let (urls, barrier) = (urls.clone(), barrier.clone());
            thread::spawn(move || {
                let mut conn = MysqlConnection::establish(&urls[i % 3]).unwrap();
                barrier.wait();
                seqgen::run_migrations(&mut conn).map_err(|e| format!("node {}: {e}", i % 3))
            })
        })
        .collect();
    let failed: Vec<String> = migrating
        .into_iter()
        .filter_map(|t| t.join().unwrap().err())
        .collect();
    assert!(failed.is_empty(), "migrations failed: {failed:#?}");

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
    // conflicting reservations on the three nodes are retried, none gives up.
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
}
