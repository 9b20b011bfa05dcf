//! `cargo run --example quickstart`, twice on one database: the second run continues right
//! after the first, because the first gives its unused numbers back at the end.

use std::process::Command;

/// The quickstart example, as `cargo test` built it beside this test (`cargo test --test
/// quickstart` alone builds no example: then `cargo build --example quickstart` first).
fn quickstart() -> Command {
    let test = std::env::current_exe().unwrap();
    let debug = test.parent().and_then(|deps| deps.parent()).unwrap();
    let binary = debug.join("examples").join("quickstart");
    let modified = |path: &std::path::Path| std::fs::metadata(path).and_then(|m| m.modified());
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("quickstart")
        .join("main.rs");
    match (modified(&binary), modified(&source)) {
        (Ok(built), Ok(written)) if built >= written => Command::new(binary),
        _ => panic!("{} is missing or older than its source: run `cargo test` (all targets) or `cargo build --example quickstart` first", binary.display()),
    }
}

/// The IDs printed after `label`.
fn ids(output: &str, label: &str) -> Vec<String> {
    output
        .lines()
        .find_map(|line| line.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` in:\n{output}"))
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The counter at the end of an ID (its last four digits: the quickstart takes few).
fn counter(id: &str) -> u64 {
    id[id.len() - 4..].parse().unwrap()
}

#[test]
fn a_second_run_continues_after_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("quickstart.db");
    let run = || {
        let output = quickstart()
            .arg(&db)
            .output()
            .expect("the quickstart example");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let first = run();
    assert!(first.contains("unused numbers back"), "{first}");
    let second = run();
    for (label, after) in [
        ("users:  ", "user:   "),
        ("menus:  ", "menu:   "),
        ("orders: ", "order:  "),
    ] {
        let last_of_first = counter(ids(&first, label).last().unwrap());
        let first_of_second = counter(&ids(&second, after)[0]);
        assert_eq!(
            first_of_second,
            last_of_first + 1,
            "{label}: {first}\n{second}"
        );
    }
}
