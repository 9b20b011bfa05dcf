//! With the `tracing` feature, a reservation is a span with its key, period, backend and the
//! count of numbers it took; what an operator should know is an event.
#![cfg(feature = "tracing")]

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use chrono::TimeDelta;
use common::{TestConnection, TestDb};
use seqgen::Spec;
use tracing_subscriber::fmt::format::FmtSpan;

backend_tests!(a_reservation_is_a_span_and_a_new_period_an_event);

/// What the subscriber writes, kept for the assertions.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn a_reservation_is_a_span_and_a_new_period_an_event<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("traced");
    let spec = Spec::builder(&key)
        .prefix("T")
        .date("%Y%m%d")
        .pad(4)
        .batch(10)
        .build()
        .unwrap();
    let (clock, generator) = common::generator_on_fixed_clock();
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_span_events(FmtSpan::CLOSE)
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        for _ in 0..11 {
            generator.next_id(&mut conn, &spec).unwrap(); // blocks 1..=10 and 11..=20
        }
        clock.advance(TimeDelta::days(1)); // 12..=20 stay unused
        generator.next_id(&mut conn, &spec).unwrap();
    });

    let out = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let spans: Vec<&str> = out
        .lines()
        .filter(|line| line.contains("reserve{") && line.contains("close"))
        .collect();
    assert_eq!(spans.len(), 3, "{out}");
    for (span, period) in spans.iter().zip(["20261123", "20261123", "20261124"]) {
        for field in [
            format!("key=\"{key}\""),
            format!("period=\"{period}\""),
            "how=\"foreground\"".to_owned(),
            "count=10".to_owned(),
            "backend=\"".to_owned(),
        ] {
            assert!(span.contains(&field), "{field} missing in {span}");
        }
    }
    let new_period = out
        .lines()
        .find(|line| line.contains("a new period"))
        .unwrap_or_else(|| panic!("no event for the new period in {out}"));
    assert!(
        new_period.contains("from=20261123") && new_period.contains("to=20261124"),
        "{new_period}"
    );
    assert!(new_period.contains("unused=9"), "{new_period}");
}
