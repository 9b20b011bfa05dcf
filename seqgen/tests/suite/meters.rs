//! With the `metrics` feature, the statistics reach the app's `metrics` recorder: counters and
//! a histogram labelled with the key, published at reservations and at `release`.
#![cfg(feature = "metrics")]

use crate::common;

use common::{TestConnection, TestDb};
use diesel_seqgen::{meter, Generator};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

backend_tests!(the_statistics_reach_the_recorder);

fn the_statistics_reach_the_recorder<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("metered");
    let spec = common::blocks_of_ten(&key);
    let generator = Generator::builder().fixed_batch().build();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        for _ in 0..25 {
            generator.next_id(&mut conn, &spec).unwrap(); // blocks 1..=10, 11..=20, 21..=30
        }
        assert_eq!(generator.release(&mut conn).unwrap(), 5); // 26..=30
    });

    let mut counters = Vec::new();
    let mut reservation_times = 0;
    for (composite, _, _, value) in snapshotter.snapshot().into_vec() {
        let metric = composite.key();
        let labels: Vec<_> = metric.labels().map(|l| (l.key(), l.value())).collect();
        assert_eq!(labels, [("key", key.as_str())], "{metric:?}");
        match value {
            DebugValue::Counter(n) => counters.push((metric.name().to_owned(), n)),
            DebugValue::Histogram(values) if metric.name() == meter::RESERVATION_SECONDS => {
                reservation_times = values.len();
            }
            other => panic!("unexpected {metric:?}: {other:?}"),
        }
    }
    counters.sort();
    let mut expected = vec![
        (meter::NUMBERS_GIVEN_BACK.to_owned(), 5),
        (meter::NUMBERS_RESERVED.to_owned(), 30),
        (meter::RESERVATIONS.to_owned(), 3),
        (meter::SERVED_FROM_MEMORY.to_owned(), 22),
    ];
    expected.sort();
    assert_eq!(counters, expected);
    assert_eq!(reservation_times, 3);
}
