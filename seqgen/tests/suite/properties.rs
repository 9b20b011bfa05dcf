//! Property: whatever the batch size, thread count and bulk sizes, never a duplicate, and
//! never more reservations than the requests could need.

use crate::common;

use std::sync::Arc;
use std::thread;

use common::{assert_distinct, TestConnection, TestDb};
use diesel_seqgen::{Generator, Spec};
use proptest::prelude::*;

backend_tests!(never_a_duplicate);

fn never_a_duplicate<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool(6);
    let case = std::sync::atomic::AtomicU32::new(0);
    let config = ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(
        batch in 1u32..40,
        bulks in prop::collection::vec(prop::collection::vec(1usize..25, 1..12), 1..6),
        generators in 1usize..3,
    )| {
        let key = db.key(&format!("prop{}", case.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        let spec = Arc::new(Spec::builder(key).prefix("P").date("").pad(9).batch(batch).build().unwrap());
        // Threads share `generators` app instances round-robin.
        let instances: Vec<Generator> = (0..generators).map(|_| Generator::new()).collect();
        let handles: Vec<_> = bulks
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, sizes)| {
                let (pool, spec, generator) = (pool.clone(), spec.clone(), instances[i % generators].clone());
                thread::spawn(move || {
                    let mut conn = pool.get().unwrap();
                    sizes
                        .into_iter()
                        .flat_map(|n| generator.next_ids(&mut *conn, &spec, n).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let ids: Vec<String> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        let asked: usize = bulks.iter().flatten().sum();
        prop_assert_eq!(ids.len(), asked);
        assert_distinct(&ids);
        let reservations: u64 = instances.iter().map(Generator::reservations).sum();
        let requests = bulks.iter().map(Vec::len).sum::<usize>() as u64;
        prop_assert!(reservations <= requests, "{} reservations for {} requests", reservations, requests);
    });
}
