//! With the `metrics` feature, the statistics reach the app's `metrics` recorder: counters, a
//! histogram and the capacity gauge labelled with the key, published at reservations and at
//! `release`, each described (unit and help text); and a counter filled to 85 % and 96 %.
#![cfg(feature = "metrics")]

use crate::common;

use common::{TestConnection, TestDb};
use diesel_seqgen::{meter, Generator};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

backend_tests!(
    the_statistics_reach_the_recorder,
    the_capacity_gauge_follows_the_counter
);

fn the_statistics_reach_the_recorder<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("metered");
    let spec = common::blocks_of_ten(&key);
    let generator = Generator::builder().fixed_batch().build();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        // seqgen describes its metrics once per process, to the recorder installed then: a
        // recorder of one's own (here, per test) is described by calling `describe`.
        meter::describe();
        for _ in 0..25 {
            generator.next_id(&mut conn, &spec).unwrap(); // blocks 1..=10, 11..=20, 21..=30
        }
        assert_eq!(generator.release(&mut conn).unwrap(), 5); // 26..=30
    });

    let mut counters = Vec::new();
    let mut reservation_times = 0;
    let mut gauge = None;
    for (composite, unit, help, value) in snapshotter.snapshot().into_vec() {
        let metric = composite.key();
        let labels: Vec<_> = metric.labels().map(|l| (l.key(), l.value())).collect();
        assert_eq!(labels, [("key", key.as_str())], "{metric:?}");
        assert!(meter::ALL.contains(&metric.name()), "{metric:?}");
        // A unit for each but the ratio (0 to 1: Prometheus' `_ratio` has none).
        let ratio = metric.name() == meter::CAPACITY_USED_RATIO;
        assert!(
            (unit.is_some() || ratio) && help.is_some(),
            "{metric:?} is not described"
        );
        assert!(
            !(ratio && unit.is_some()),
            "{metric:?}: a ratio has no unit"
        );
        match value {
            DebugValue::Counter(n) => counters.push((metric.name().to_owned(), n)),
            DebugValue::Histogram(values) if metric.name() == meter::RESERVATION_SECONDS => {
                reservation_times = values.len();
            }
            DebugValue::Gauge(ratio) if metric.name() == meter::CAPACITY_USED_RATIO => {
                gauge = Some(ratio.into_inner());
            }
            other => panic!("unexpected {metric:?}: {other:?}"),
        }
    }
    // The third block ends at 30, of 999,999.
    assert_eq!(gauge, Some(30.0 / 999_999.0));
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

/// A pad-2 key (99 numbers) filled in blocks of ten: the gauge reads what the last block
/// reached, 0.9 after nine blocks and 1.0 with the tenth; nothing is set for a `widen` key.
fn the_capacity_gauge_follows_the_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = diesel_seqgen::Spec::builder(db.key("filling"))
        .date("")
        .pad(2)
        .batch(10)
        .build()
        .unwrap();
    let widen = diesel_seqgen::Spec::builder(db.key("widening"))
        .date("")
        .pad(2)
        .batch(10)
        .overflow(diesel_seqgen::Overflow::Widen)
        .build()
        .unwrap();
    let generator = Generator::builder().fixed_batch().build();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let gauge = |name: &str| {
        snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .find_map(|(composite, _, _, value)| {
                let key = composite.key();
                let of_key = key.labels().any(|l| l.value() == name);
                match value {
                    DebugValue::Gauge(ratio)
                        if of_key && key.name() == meter::CAPACITY_USED_RATIO =>
                    {
                        Some(ratio.into_inner())
                    }
                    _ => None,
                }
            })
    };
    metrics::with_local_recorder(&recorder, || {
        for _ in 0..81 {
            generator.next_id(&mut conn, &spec).unwrap();
            generator.next_id(&mut conn, &widen).unwrap();
        }
    });
    assert_eq!(gauge(spec.key()), Some(90.0 / 99.0), "nine blocks");
    assert_eq!(
        gauge(widen.key()),
        None,
        "widen goes on: no capacity to run out of"
    );
}
