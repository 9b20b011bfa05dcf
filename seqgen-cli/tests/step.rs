//! The command on a key with a step (`{seq:4,step=10}`): it reads the step from the key's
//! recorded shape, so `gaps` names missing numbers as printed, `check` sees a counter behind
//! its table and `adopt` raises it, `set-start` takes a number on the step, `capacity` counts
//! IDs; and `number` numbers rows on the step of a shape given to it.
#![cfg(feature = "sqlite")]

use std::process::Command;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::{Generator, Spec};

/// `seqgen ARGS` on the SQLite file `url`: exit code and standard output.
fn seqgen(url: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(args)
        .args(["--database-url", url])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), format!("{out}{err}"))
}

#[test]
fn every_tool_reads_the_step_from_the_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("step.db");
    let url = path.to_str().unwrap();
    assert_eq!(seqgen(url, &["migrate"]).0, 0);
    let mut conn = SqliteConnection::establish(url).unwrap();
    conn.batch_execute("CREATE TABLE lines (id TEXT PRIMARY KEY)")
        .unwrap();
    let spec = Spec::builder("lines")
        .prefix("L")
        .date("")
        .pad(4)
        .step(10)
        .start(10)
        .gapless()
        .build()
        .unwrap();
    let generator = Generator::new();
    let insert = |conn: &mut SqliteConnection| {
        conn.transaction(|conn| {
            let id = generator.next_id(conn, &spec)?;
            conn.batch_execute(&format!("INSERT INTO lines VALUES ('{id}')"))?;
            Ok::<_, diesel_seqgen::Error>(id)
        })
        .unwrap()
    };
    for expected in ["L0010", "L0020", "L0030"] {
        assert_eq!(insert(&mut conn), expected);
    }
    let (code, keys) = seqgen(url, &["keys", "--key", "lines", "--json"]);
    assert_eq!(code, 0, "{keys}");
    assert!(keys.contains("step=10"), "{keys}");

    // The second line deleted: `gaps` names it as printed, 20, not as the second counter.
    conn.batch_execute("DELETE FROM lines WHERE id = 'L0020'")
        .unwrap();
    let table = ["--key", "lines", "--table", "lines", "--column", "id"];
    let mut gaps = vec!["gaps"];
    gaps.extend(table);
    let (code, out) = seqgen(url, &gaps);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("numbers 10..=30 handed out"), "{out}");
    assert!(out.contains("      20  L0020  unexplained"), "{out}");

    // A row another program wrote past the counter: `check` sees it, `adopt` raises it.
    conn.batch_execute("INSERT INTO lines VALUES ('L0090')")
        .unwrap();
    let mut check = vec!["check"];
    check.extend(table);
    assert_eq!(seqgen(url, &check).0, 1);
    let mut adopt = vec!["adopt"];
    adopt.extend(table);
    let (code, out) = seqgen(url, &adopt);
    assert_eq!(code, 0, "{out}");
    assert_eq!(seqgen(url, &check).0, 0);
    assert_eq!(insert(&mut conn), "L0100");

    // `set-start` takes a number on the step, and refuses one off it.
    let (code, out) = seqgen(url, &["set-start", "--key", "lines", "1005"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not on the key's step"), "{out}");
    let (code, out) = seqgen(url, &["set-start", "--key", "lines", "1000"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("-> 100") && out.contains("prints 1000"),
        "{out}"
    );
    assert_eq!(insert(&mut conn), "L1000");

    // `capacity` counts IDs: 100 of the 999 a step of 10 holds in four digits.
    let (code, out) = seqgen(url, &["capacity", "--key", "lines"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("lines at 10.0%"), "{out}");

    // `number` gives committed rows numbers on a step, from a shape given on the command.
    conn.batch_execute(
        "CREATE TABLE refs (id INTEGER PRIMARY KEY, ref TEXT UNIQUE); \
         INSERT INTO refs (ref) VALUES (NULL), (NULL), (NULL)",
    )
    .unwrap();
    let shape = "R{date:}{seq:4,step=5}";
    let number = [
        "number",
        "--key",
        "refs",
        "--table",
        "refs",
        "--column",
        "ref",
        "--order-by",
        "id",
        "--shape",
        shape,
    ];
    let (code, out) = seqgen(url, &number);
    assert_eq!(code, 0, "{out}");
    let refs: Vec<String> = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "ref FROM refs ORDER BY id",
    ))
    .load(&mut conn)
    .unwrap();
    assert_eq!(refs, ["R0005", "R0010", "R0015"]);
}
