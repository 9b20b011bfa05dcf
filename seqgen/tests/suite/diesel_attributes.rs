//! The rows seqgen writes itself (the derive's `InsertRow`, `seqgen-derive/src/row.rs`) are
//! the rows Diesel's derived `Insertable` writes: a column renamed, a `None` written as
//! `DEFAULT` (the column's default) or, with `treat_none_as_default_value = false`, as
//! `NULL`, a field skipped. A model whose row seqgen does not write (its table inferred from
//! its name, a field `embed`ded) is inserted by Diesel's own statement, and reads back the same.

use crate::common::{self, TestConnection, TestDb};

use std::sync::atomic::Ordering::Relaxed;

use diesel::prelude::*;
use diesel::query_dsl::methods::LoadQuery;
use diesel_seqgen::insert::Insert;
use diesel_seqgen::DistributedId;

diesel::table! {
    seqgen_attr_rows (id) {
        id -> Text,
        kind -> Text,
        note -> Nullable<Text>,
        tag -> Nullable<Text>,
    }
}

/// Every setting of Diesel's that the derive's row follows.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = seqgen_attr_rows)]
struct Named {
    #[distributed_id(key = "seqgen_attr_named", prefix = "N", date = "", pad = 4)]
    id: String,
    #[diesel(column_name = kind)]
    code: String,
    note: Option<String>,
    #[diesel(treat_none_as_default_value = false)]
    tag: Option<String>,
    #[diesel(skip_insertion)]
    #[allow(dead_code)]
    local: u8,
}

/// Its table inferred by Diesel from its name (`seqgen_attr_rows`): seqgen does not name it.
#[derive(Insertable, DistributedId)]
struct SeqgenAttrRow {
    #[distributed_id(key = "seqgen_attr_inferred", prefix = "I", date = "", pad = 4)]
    id: String,
    kind: String,
    note: Option<String>,
    tag: Option<String>,
}

#[derive(Insertable)]
#[diesel(table_name = seqgen_attr_rows)]
struct Rest {
    kind: String,
    note: Option<String>,
    tag: Option<String>,
}

/// Half of its row is another struct's.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = seqgen_attr_rows)]
struct Embedding {
    #[distributed_id(key = "seqgen_attr_embedding", prefix = "E", date = "", pad = 4)]
    id: String,
    #[diesel(embed)]
    rest: Rest,
}

/// Borrowed fields, as Diesel's own `Insertable` models often are.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = seqgen_attr_rows)]
struct Borrowed<'a> {
    #[distributed_id(key = "seqgen_attr_borrowed", prefix = "B", date = "", pad = 4)]
    id: String,
    kind: &'a str,
    note: Option<&'a str>,
    tag: Option<&'a str>,
}

type Read = (String, String, Option<String>, Option<String>);

fn rows_read_back_as_diesels_insertable_writes_them<C: TestConnection>(db: TestDb<C>)
where
    Vec<Named>: Insert<seqgen_attr_rows::table, C>,
    Vec<SeqgenAttrRow>: Insert<seqgen_attr_rows::table, C>,
    Vec<Embedding>: Insert<seqgen_attr_rows::table, C>,
    for<'a> Vec<Borrowed<'a>>: Insert<seqgen_attr_rows::table, C>,
    for<'a> seqgen_attr_rows::table: LoadQuery<'a, C, Read>,
{
    let table = "CREATE TABLE seqgen_attr_rows (id VARCHAR(20) PRIMARY KEY, \
                 kind VARCHAR(20) NOT NULL, note VARCHAR(20) DEFAULT 'default note', \
                 tag VARCHAR(20) DEFAULT 'default tag')";
    let scratch = common::scratch_with_table(&db, "diesel_attributes", table, None);
    let mut conn = scratch.connect();
    let some = |text: &str| Some(text.to_owned());

    let named = |code: &str, note: Option<String>, tag: Option<String>| Named {
        id: String::new(),
        code: code.into(),
        note,
        tag,
        local: 7,
    };
    let insert = |conn: &mut C, mut rows: Vec<Named>| {
        diesel_seqgen::insert_into(seqgen_attr_rows::table)
            .values(&mut rows)
            .execute(conn)
            .unwrap();
    };
    // The first insert identifies the connection's database (and marks its session).
    insert(&mut conn, vec![named("first", some("n"), some("t"))]);
    let queries = common::count_queries(&mut conn);
    insert(
        &mut conn,
        vec![
            named("plain", some("n"), None),
            named("both", some("n2"), some("t2")),
        ],
    );
    if C::NAME != "sqlite" {
        // Nothing is guessed on SQLite; elsewhere the derive's row is the one statement sent.
        assert_eq!(
            queries.load(Relaxed),
            common::statements_per_bulk(C::NAME),
            "the row seqgen writes, one statement"
        );
    }
    insert(&mut conn, vec![named("default", None, None)]);

    let mut inferred = vec![SeqgenAttrRow {
        id: String::new(),
        kind: "inferred".into(),
        note: None,
        tag: some("t"),
    }];
    diesel_seqgen::insert_into(seqgen_attr_rows::table)
        .values(&mut inferred)
        .execute(&mut conn)
        .unwrap();
    let mut embedding = vec![Embedding {
        id: String::new(),
        rest: Rest {
            kind: "embedded".into(),
            note: some("n"),
            tag: None,
        },
    }];
    diesel_seqgen::insert_into(seqgen_attr_rows::table)
        .values(&mut embedding)
        .execute(&mut conn)
        .unwrap();

    let kind = String::from("borrowed");
    let borrowed = |note| Borrowed {
        id: String::new(),
        kind: &kind,
        note,
        tag: Some("t"),
    };
    // The key's first insert reserves its block; the second is the insert alone.
    let mut first = vec![borrowed(None)];
    diesel_seqgen::insert_into(seqgen_attr_rows::table)
        .values(&mut first)
        .execute(&mut conn)
        .unwrap();
    let queries = common::count_queries(&mut conn);
    let mut second = vec![borrowed(Some("n"))];
    diesel_seqgen::insert_into(seqgen_attr_rows::table)
        .values(&mut second)
        .execute(&mut conn)
        .unwrap();
    if C::NAME != "sqlite" {
        assert_eq!(
            queries.load(Relaxed),
            1,
            "borrowed fields, the row seqgen writes"
        );
    }

    let mut read: Vec<Read> = seqgen_attr_rows::table.load(&mut conn).unwrap();
    read.sort();
    let row = |id: &str, kind: &str, note: Option<&str>, tag: Option<&str>| {
        (
            id.to_owned(),
            kind.to_owned(),
            note.map(Into::into),
            tag.map(Into::into),
        )
    };
    assert_eq!(
        read,
        [
            row("B0001", "borrowed", Some("default note"), Some("t")),
            row("B0002", "borrowed", Some("n"), Some("t")),
            row("E0001", "embedded", Some("n"), Some("default tag")),
            row("I0001", "inferred", Some("default note"), Some("t")),
            row("N0001", "first", Some("n"), Some("t")),
            row("N0002", "plain", Some("n"), None),
            row("N0003", "both", Some("n2"), Some("t2")),
            row("N0004", "default", Some("default note"), None),
        ]
    );
}

backend_tests!(rows_read_back_as_diesels_insertable_writes_them);
