//! The scope printed in IDs (`spec/printed_scope.rs`).

use crate::{Check, Overflow, Setting, Spec};

fn invoices() -> Spec {
    Spec::builder("invoices")
        .format("{scope}-{date}-{seq}")
        .date("%Y")
        .pad(4)
        .scoped()
        .build()
        .unwrap()
}

#[test]
fn each_scope_prints_and_reads_back_its_own_ids() {
    let spec = invoices();
    assert!(spec.prints_scope());
    for scope in ["ACME", "GLOBEX"] {
        let id = spec.format_in_scope(scope, "2026", 1);
        assert_eq!(id, format!("{scope}-2026-0001"));
        let parts = spec.parse(&id).unwrap();
        assert_eq!(parts.scope.as_deref(), Some(scope));
        assert_eq!(
            (parts.period.as_str(), spec.counter_of(&parts)),
            ("2026", Some(1))
        );
    }
    // The fixed-width parts are read from both ends: a scope holding the separator, or digits
    // beside the counter, is still one scope.
    let tricky = Spec::builder("k")
        .format("{scope}{seq}")
        .date("")
        .pad(4)
        .scoped();
    let tricky = tricky.build().unwrap();
    for (scope, counter) in [("AC-ME", 7), ("12", 3400), ("1", 23400 % 9999)] {
        let id = tricky.format_in_scope(scope, "", counter);
        let parts = tricky.parse(&id).unwrap();
        assert_eq!(parts.scope.as_deref(), Some(scope), "{id}");
        assert_eq!(tricky.counter_of(&parts), Some(counter), "{id}");
    }
    let dashed = spec.parse("AC-ME-2026-0002").unwrap();
    assert_eq!(dashed.scope.as_deref(), Some("AC-ME"));
    // No scope, no ID.
    assert!(spec.parse("-2026-0001").is_err());
}

#[test]
fn the_shape_records_the_printed_scope() {
    let spec = invoices();
    assert_eq!(spec.shape(), "{scope}-{date:%Y}-{seq:4}{scoped}");
    let back = Spec::from_shape("invoices", spec.shape()).unwrap();
    assert_eq!(back.shape(), spec.shape());
    let id = spec.format_in_scope("ACME", "2026", 42);
    assert_eq!(back.format_in_scope("ACME", "2026", 42), id);
    assert_eq!(back.parse(&id).unwrap(), spec.parse(&id).unwrap());
}

#[test]
fn a_printed_scope_is_refused_where_an_id_could_not_say_where_it_ends() {
    let base = || {
        Spec::builder("k")
            .format("{scope}-{date}-{seq}")
            .date("%Y")
            .pad(4)
    };
    let unscoped = base().build().unwrap_err();
    assert_eq!(unscoped.setting(), Setting::Format, "{unscoped}");
    assert!(
        unscoped.to_string().contains("does not count per scope"),
        "{unscoped}"
    );
    let widen = base()
        .scoped()
        .overflow(Overflow::Widen)
        .build()
        .unwrap_err();
    assert!(widen.to_string().contains("widen"), "{widen}");
    let varying = base().scoped().date("%-d").build().unwrap_err();
    assert!(varying.to_string().contains("width varies"), "{varying}");
    if cfg!(feature = "check-characters") {
        let checked = Spec::builder("k")
            .format("{scope}{seq}{check}")
            .date("")
            .scoped()
            .check(Check::Luhn);
        let checked = checked.build().unwrap_err();
        assert_eq!(checked.setting(), Setting::Format, "{checked}");
    }
}
