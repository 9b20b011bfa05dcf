//! Each rule of the checker, broken on purpose.

use super::*;

fn attempt(op: &str, ids: &[&str], outcome: Option<Outcome>) -> Attempt {
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    Attempt {
        op: op.into(),
        ended_with: ids.clone(),
        ids,
        outcome,
        ended_at: None,
    }
}

fn tables(rows: &[&str], counter: i64) -> Tables {
    let mut t = Tables::default();
    t.rows
        .insert("k".into(), rows.iter().map(|s| s.to_string()).collect());
    t.counters
        .insert(("c".into(), "".into(), "".into()), counter);
    t
}

fn key(gapless: bool) -> Key {
    Key {
        rows: "k".into(),
        counter: ("c".into(), "".into()),
        gapless,
        deferred: false,
    }
}

const ONE: &str = "L000000000001";
const TWO: &str = "L000000000002";

#[test]
fn each_rule_fails_when_broken() {
    use Outcome::*;
    let ok = check(
        &key(false),
        &[attempt("1.0", &[ONE], Some(Committed))],
        &tables(&[ONE], 1),
    );
    assert!(ok.errors.is_empty(), "{:?}", ok.errors);
    // A batched number handed out twice, even if one rolled back.
    let twice = [
        attempt("1.0", &[ONE], Some(RolledBack)),
        attempt("2.0", &[ONE], Some(Committed)),
    ];
    assert!(check(&key(false), &twice, &tables(&[ONE], 1)).errors[0].starts_with("repeat"));
    // ... which gapless does: the number is taken again.
    assert!(check(&key(true), &twice, &tables(&[ONE], 1))
        .errors
        .is_empty());
    // A commit lost, a counter behind, a gapless hole.
    let lost = check(
        &key(false),
        &[attempt("1.0", &[TWO], Some(Committed))],
        &tables(&[], 2),
    );
    assert!(lost.errors[0].contains("not in the table"));
    let behind = check(
        &key(false),
        &[attempt("1.0", &[TWO], Some(Committed))],
        &tables(&[TWO], 1),
    );
    assert!(behind.errors[0].contains("behind"));
    let hole = check(
        &key(true),
        &[attempt("1.0", &[TWO], Some(Committed))],
        &tables(&[TWO], 2),
    );
    assert!(hole.errors[0].contains("missing [1]"));
    // A rolled-back gapless number in the table that no one took again.
    let kept = check(
        &key(true),
        &[attempt("1.0", &[ONE], Some(RolledBack))],
        &tables(&[ONE], 1),
    );
    assert!(kept.errors[0].contains("rolled back"));
    // ... unless an attempt killed before it learned its IDs took it again.
    let taken_again = check(
        &key(true),
        &[
            attempt("1.0", &[ONE], Some(RolledBack)),
            attempt("1.1", &[], None),
        ],
        &tables(&[ONE], 1),
    );
    assert!(taken_again.errors.is_empty(), "{:?}", taken_again.errors);
    // A row no history names, with no attempt killed blind to explain it.
    let stray = check(&key(false), &[], &tables(&[ONE], 1));
    assert!(stray.errors[0].contains("no history names"));
    let killed = check(
        &key(false),
        &[attempt("1.0", &[], None)],
        &tables(&[ONE], 1),
    );
    assert!(killed.errors.is_empty() && killed.unknown == 1);
}

#[test]
fn each_rule_of_numbers_after_the_commit_fails_when_broken() {
    use Outcome::*;
    let deferred = Key {
        deferred: true,
        ..key(true)
    };
    let table = |rows: &[(&str, Option<&str>)], counter: i64| {
        let mut t = tables(&[], counter);
        let rows = rows
            .iter()
            .map(|(t, n)| (t.to_string(), n.map(str::to_owned)));
        t.pending.insert("k".into(), rows.collect());
        t
    };
    let wrote = |token: &str, outcome| attempt("1.0", &[token], Some(outcome));
    let ok = check(
        &deferred,
        &[wrote("a", Committed)],
        &table(&[("a", Some(ONE))], 1),
    );
    assert!(ok.errors.is_empty(), "{:?}", ok.errors);
    let errors = |attempts: &[Attempt], rows: &[(&str, Option<&str>)], counter| {
        check(&deferred, attempts, &table(rows, counter)).errors
    };
    let two = [
        wrote("a", Committed),
        attempt("1.1", &["b"], Some(Committed)),
    ];
    assert!(errors(&two, &[("a", Some(ONE)), ("b", Some(ONE))], 1)[0].contains("1 repeated"));
    assert!(errors(&two, &[("a", Some(ONE)), ("b", None)], 1)[0].contains("no number"));
    assert!(errors(&two, &[("a", Some(ONE))], 1)[0].contains("not in the table"));
    let both = [("a", Some(ONE)), ("b", Some(TWO))];
    assert!(errors(&two, &both, 3)[0].contains("holds 3"));
    let rolled = [wrote("a", RolledBack)];
    assert!(errors(&rolled, &[("a", Some(ONE))], 1)[0].contains("rolled it back"));
}
