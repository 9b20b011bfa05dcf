//! An application's own metrics (diesel-seqgen's `metrics` feature) through
//! `metrics-exporter-prometheus` installed as the guide shows (`guide::operations`, "Metrics"),
//! scraped by a real Prometheus: the reservation time is a histogram with buckets, so the
//! dashboard's p99 panel (`histogram_quantile` over `seqgen_reservation_seconds_bucket`) has
//! something to draw; installed without the buckets it is a summary, with none.

use diesel::prelude::*;
use diesel_seqgen::meter;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
#[path = "support/prometheus.rs"]
mod prometheus;
use prometheus::{free_port, Prometheus};

#[test]
#[cfg(feature = "sqlite")]
fn the_reservation_time_reaches_prometheus_as_a_histogram() {
    // The guide's recorder: the histogram's buckets set (`meter::RESERVATION_SECONDS_BUCKETS`).
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(meter::RESERVATION_SECONDS.to_owned()),
            meter::RESERVATION_SECONDS_BUCKETS,
        )
        .unwrap()
        .install_recorder()
        .unwrap();

    // An app's work, on the defaults.
    let dir = tempfile::tempdir().unwrap();
    let mut conn =
        SqliteConnection::establish(dir.path().join("app.db").to_str().unwrap()).unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = diesel_seqgen::Spec::builder("orders")
        .prefix("ORD")
        .date("")
        .build()
        .unwrap();
    let generator = diesel_seqgen::Generator::new();
    for _ in 0..50 {
        generator.next_id(&mut conn, &spec).unwrap();
    }

    // What the recorder renders, served at /metrics as the exporter's own listener would.
    let port = free_port();
    let server = tiny_http::Server::http(("127.0.0.1", port)).unwrap();
    // Serves until the process ends.
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let _ = request.respond(tiny_http::Response::from_string(recorder.render()));
        }
    });
    let Some(prometheus) = Prometheus::scraping(dir.path(), &[("app", port)]) else {
        return;
    };
    let query = format!("{}_bucket", meter::RESERVATION_SECONDS);
    let (buckets, waited) = prometheus.wait_for(&query, |series| {
        let of_key: Vec<_> = series
            .iter()
            .filter(|series| series["metric"]["key"] == "orders")
            .collect();
        (!of_key.is_empty()).then_some(of_key.len())
    });
    // One series per bucket, and `+Inf`.
    assert_eq!(buckets, meter::RESERVATION_SECONDS_BUCKETS.len() + 1);
    let (count, _) =
        prometheus.wait_for(&format!("{}_count", meter::RESERVATION_SECONDS), |series| {
            series
                .first()
                .and_then(|series| series["value"][1].as_str()?.parse::<f64>().ok())
        });
    assert!(count >= 1.0, "{count} reservations");
    println!(
        "Prometheus read {buckets} buckets of {query} after {waited:?} ({count} reservations)"
    );
}
