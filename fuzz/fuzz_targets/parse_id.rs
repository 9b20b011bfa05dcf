//! Parsing an ID with a spec, for every policy (widen, letters, cycle, series, check
//! characters, scopes printed or not, obfuscation, steps, resets): never a panic; an ID the spec formats parses back to its
//! counter; and whenever an arbitrary text parses, formatting what it parsed to gives the text.
#![no_main]

mod common;

use arbitrary::Arbitrary;
use chrono::{DateTime, Utc};
use libfuzzer_sys::fuzz_target;
use diesel_seqgen_core::Overflow;

#[derive(Arbitrary, Debug)]
struct Input {
    spec: common::SpecInput,
    /// Seconds since 1970, for the period.
    at: u32,
    counters: Vec<u64>,
    /// The scope IDs are formatted in (a template may print it).
    scope: String,
    ids: Vec<String>,
    numbers: Vec<i64>,
}

fuzz_target!(|input: Input| {
    let Ok(spec) = input.spec.builder().build() else {
        return;
    };
    let now = DateTime::<Utc>::from_timestamp(i64::from(input.at), 0).unwrap();
    let period = spec.period_at(now);
    let cycle = matches!(spec.overflow(), Overflow::Cycle { .. });
    // Any scope the runtime takes: not empty (it refuses that), whatever its characters.
    let scope = if input.scope.is_empty() { "s" } else { input.scope.as_str() };
    let printed_scope = spec.prints_scope().then(|| scope.to_owned());
    // A printed date always reads back to its reset's counter (the build checked it can).
    let counter_period = spec.counter_period(&period);
    match spec.reset() {
        None => assert_eq!(counter_period, period),
        Some(_) => assert!(!counter_period.starts_with('?'), "{spec:?}: {period:?} read no counter"),
    }
    for &counter in input.counters.iter().take(16) {
        let counter = 1 + counter % spec.capacity().min(u64::MAX - 1);
        let id = spec.format_in_scope(scope, &period, counter);
        let parts = spec
            .parse(&id)
            .unwrap_or_else(|e| panic!("{spec:?} formatted {counter} as {id:?}, refused: {e}"));
        assert_eq!(parts.period, period, "{spec:?}: {id:?}");
        assert_eq!(parts.scope, printed_scope, "{spec:?}: {id:?}");
        if !cycle {
            assert_eq!(spec.counter_of(&parts), Some(counter), "{spec:?}: {id:?}");
        }
        if let Some(number) = spec.numeric(&period, counter) {
            let parts = spec.parse_number(number).unwrap();
            assert_eq!(
                spec.format(&parts.period, counter),
                id,
                "{spec:?}: {number}"
            );
        }
    }
    let ids = input.ids.iter().map(String::as_str);
    let numbers = input.numbers.iter().map(|n| n.to_string());
    for id in ids.map(str::to_owned).chain(numbers).take(16) {
        let Ok(parts) = spec.parse(&id) else {
            continue;
        };
        // What a cycle shows is the counter in its first round (the counter is not known).
        let counter = match spec.counter_of(&parts) {
            Some(counter) => counter,
            None if cycle && !spec.is_obfuscated() => parts.seq,
            None => continue,
        };
        let scope = parts.scope.as_deref().unwrap_or("");
        let _ = spec.counter_period(&parts.period); // any text that parses: never a panic
        assert_eq!(
            spec.format_in_scope(scope, &parts.period, counter),
            id,
            "{spec:?}: {parts:?}"
        );
    }
});
