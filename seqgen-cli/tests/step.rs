//! The command on a key with a step (`{seq:4,step=10}`): it reads the step from the key's
//! recorded shape, so `gaps` names missing numbers as printed, `check` sees a counter behind
//! its table and `adopt` raises it, `set-start` takes a number on the step, `capacity` counts
//! IDs; and `number` numbers rows on the step of a shape given to it.
#![cfg(feature = "sqlite")]

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::{Generator, Spec};

#[allow(dead_code)] // the server tests' watchdog and runs in a directory
#[path = "support/command.rs"]
mod command;
use command::{expect, seqgen};

#[test]
fn every_tool_reads_the_step_from_the_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("step.db");
    let url = path.to_str().unwrap();
    expect(&seqgen(Some(url), &["migrate"]), 0);
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
    let keys = seqgen(Some(url), &["keys", "--key", "lines", "--json"]);
    expect(&keys, 0);
    assert!(keys.out.contains("step=10"), "{}", keys.out);

    // The second line deleted: `gaps` names it as printed, 20, not as the second counter.
    conn.batch_execute("DELETE FROM lines WHERE id = 'L0020'")
        .unwrap();
    let table = ["--key", "lines", "--table", "lines", "--column", "id"];
    let mut gaps = vec!["gaps"];
    gaps.extend(table);
    let run = seqgen(Some(url), &gaps);
    expect(&run, 1);
    assert!(
        run.out.contains("numbers 10..=30 handed out"),
        "{}",
        run.out
    );
    assert!(
        run.out.contains("      20  L0020  unexplained"),
        "{}",
        run.out
    );

    // A row another program wrote past the counter: `check` sees it, `adopt` raises it.
    conn.batch_execute("INSERT INTO lines VALUES ('L0090')")
        .unwrap();
    let mut check = vec!["check"];
    check.extend(table);
    expect(&seqgen(Some(url), &check), 1);
    let mut adopt = vec!["adopt"];
    adopt.extend(table);
    let run = seqgen(Some(url), &adopt);
    expect(&run, 0);
    expect(&seqgen(Some(url), &check), 0);
    assert_eq!(insert(&mut conn), "L0100");

    // `set-start` takes a number on the step, and refuses one off it.
    let run = seqgen(Some(url), &["set-start", "--key", "lines", "1005"]);
    expect(&run, 2);
    assert!(run.err.contains("not on the key's step"), "{}", run.err);
    let run = seqgen(Some(url), &["set-start", "--key", "lines", "1000"]);
    expect(&run, 0);
    assert!(
        run.out.contains("-> 100") && run.out.contains("prints 1000"),
        "{}",
        run.out
    );
    assert_eq!(insert(&mut conn), "L1000");

    // `capacity` counts IDs: 100 of the 999 a step of 10 holds in four digits.
    let run = seqgen(Some(url), &["capacity", "--key", "lines"]);
    expect(&run, 0);
    assert!(run.out.contains("lines at 10.0%"), "{}", run.out);

    // `number` gives committed rows numbers on a step, from a shape given on the command.
    conn.batch_execute(
        "CREATE TABLE refs (id INTEGER PRIMARY KEY, ref TEXT UNIQUE); \
         INSERT INTO refs (ref) VALUES (NULL), (NULL), (NULL)",
    )
    .unwrap();
    command::number_refs(url, "R{date:}{seq:4,step=5}", &[]);
    let refs: Vec<String> = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "ref FROM refs ORDER BY id",
    ))
    .load(&mut conn)
    .unwrap();
    assert_eq!(refs, ["R0005", "R0010", "R0015"]);
}
