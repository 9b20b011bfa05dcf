//! Property: for any valid spec, period and counter, `parse(format(..))` gives the parts back,
//! and so two different counters of a period never format to the same ID.

use chrono::{TimeZone as _, Utc};
use diesel_seqgen::{Overflow, Spec};
use proptest::prelude::*;

const DATES: [&str; 7] = ["", "%Y%m%d", "%y%m", "%Y", "%d%m%Y", "%Y-%m-%d", "%-d"];

fn spec_strategy() -> impl Strategy<Value = Spec> {
    (
        prop::sample::select(vec!["", "U", "ORD", "é"]),
        prop::sample::select(DATES.to_vec()),
        1u32..8,
        0usize..4,
        prop::option::of(prop::sample::select(vec![
            vec!["aa", "bb", "cc"],
            vec!["X", "Y"],
        ])),
        prop::option::of(prop::sample::select(vec![
            "{prefix}{date}-{seq}",
            "{seq}/{date}{prefix}",
            "[{prefix}]{date}{series}{seq}",
        ])),
    )
        .prop_filter_map(
            "a valid spec",
            |(prefix, date, pad, policy, series, template)| {
                let mut b = Spec::builder("k").prefix(prefix).date(date).pad(pad);
                b = match policy {
                    0 => b,
                    1 => b.overflow(Overflow::Widen),
                    2 => b.overflow(Overflow::Letters),
                    _ => b.overflow(Overflow::Cycle {
                        max: 10u64.pow(pad) - 1,
                    }),
                };
                if let Some(codes) = series {
                    b = b.series(codes, (10u64.pow(pad) - 1).min(7));
                }
                if let Some(t) = template {
                    b = b.format(t);
                }
                b.build().ok()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn format_then_parse_round_trips(
        spec in spec_strategy(),
        day in 0i64..4000,
        counter in 1u64..50_000_000,
    ) {
        let counter = counter % spec.capacity().min(50_000_000) + 1;
        let at = Utc.with_ymd_and_hms(2020, 1, 1, 12, 0, 0).unwrap() + chrono::TimeDelta::days(day);
        let period = spec.period_at(at);
        let id = spec.format(&period, counter);
        let parts = spec.parse(&id).map_err(|e| TestCaseError::fail(format!("{e} ({spec:?})")))?;
        prop_assert_eq!(&parts.period, &period);
        prop_assert_eq!(&parts.prefix, spec.prefix());
        let (series, seq) = match (spec.series(), spec.overflow()) {
            (Some(s), _) => (Some(s.codes()[((counter - 1) / s.max()) as usize].clone()), (counter - 1) % s.max() + 1),
            (None, Overflow::Cycle { max }) => (None, (counter - 1) % max + 1),
            _ => (None, counter),
        };
        prop_assert_eq!(parts.series, series);
        prop_assert_eq!(parts.seq, seq);
    }
}

#[test]
fn refuses_what_the_spec_could_not_have_produced() {
    let spec = Spec::builder("users")
        .prefix("U")
        .date("%Y%m%d")
        .pad(6)
        .build()
        .unwrap();
    assert!(spec.parse("U20250702000001").is_ok());
    for bad in [
        "",
        "U2025070200001",
        "X20250702000001",
        "U20251302000001",
        "U20250702000000",
        "U2025070200000A",
        "U20250702000001X",
    ] {
        assert!(spec.parse(bad).is_err(), "{bad}");
    }
    let err = spec.parse("X20250702000001").unwrap_err().to_string();
    assert!(err.contains("prefix"), "{err}");
}
