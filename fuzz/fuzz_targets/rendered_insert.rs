//! Reading Diesel's rendered insert back (the statement reader behind the one-statement and
//! checked inserts), PostgreSQL and MySQL forms: any text is refused or yields a statement
//! whose bind parameters are exactly the original ones, in order, one per column of each row;
//! and the statement written back from what was read reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use diesel_seqgen::__fuzz::{read_insert, ReadInsert};

fuzz_target!(|input: (bool, &str)| {
    let (mysql, sql) = input;
    let Some(read) = read_insert(sql, mysql) else {
        return;
    };
    let ReadInsert {
        table,
        columns,
        rows,
    } = &read;
    assert!(!columns.is_empty() && !rows.is_empty(), "{sql:?}");
    let mut binds = 0;
    for row in rows {
        assert_eq!(row.len(), columns.len(), "{sql:?}");
        for bind in row {
            binds += 1;
            let expected = if mysql {
                "?".to_owned()
            } else {
                format!("${binds}")
            };
            assert_eq!(*bind, expected, "{sql:?}: bind {binds}");
        }
    }
    // Every bind parameter of the text is one of them: none was skipped or read twice.
    let in_text = if mysql {
        sql.matches('?').count()
    } else {
        sql.matches('$').count()
    };
    let quoted_marks: usize = std::iter::once(table)
        .chain(columns)
        .map(|name| name.matches(if mysql { '?' } else { '$' }).count())
        .sum();
    assert_eq!(in_text - quoted_marks, binds, "{sql:?}");
    let rows: Vec<String> = rows
        .iter()
        .map(|row| format!("({})", row.join(", ")))
        .collect();
    let written = format!(
        "INSERT INTO {table} ({}) VALUES {}",
        columns.join(", "),
        rows.join(", ")
    );
    assert_eq!(
        read_insert(&written, mysql).as_ref(),
        Some(&read),
        "{written:?}"
    );
});
