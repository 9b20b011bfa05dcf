//! `diesel_seqgen::Id` and `NumericId`: the habit of `diesel::insert_into(..).values(&record)`
//! on a record seqgen has not filled is an error before anything is sent, on every backend;
//! seqgen's own doors (`insert_into` batched and gapless, PostgreSQL's one-statement insert
//! included, `assign_ids`) fill them; they read back from the table.

use crate::common;

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::admin;
use diesel_seqgen::{DistributedId, Id, NotFilled, NumericId};

backend_tests!(an_unfilled_id_is_never_inserted);

diesel::table! {
    accounts (id) {
        id -> Text,
        number -> BigInt,
        name -> Text,
    }
}

#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = accounts)]
struct NewAccount {
    #[distributed_id(key = "id_types_accounts", prefix = "A", date = "", pad = 6)]
    id: Id,
    #[distributed_id(key = "id_types_numbers", date = "", pad = 9)]
    number: NumericId,
    name: String,
}

#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = accounts)]
struct NewLedger {
    #[distributed_id(key = "id_types_ledgers", prefix = "L", date = "", pad = 6, gapless)]
    id: Id,
    #[distributed_id(
        key = "id_types_ledger_numbers",
        date = "",
        pad = 9,
        start = 1000,
        gapless
    )]
    number: NumericId,
    name: String,
}

diesel::table! {
    entries (id) {
        id -> Text,
        name -> Text,
    }
}

/// One gapless `Id`: on PostgreSQL its insert takes its number in the statement itself, which
/// never writes the unfilled value.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = entries)]
struct NewEntry {
    #[distributed_id(key = "id_types_entries", prefix = "E", date = "", pad = 6, gapless)]
    id: Id,
    name: String,
}

fn account(name: &str) -> NewAccount {
    NewAccount {
        id: Id::default(),
        number: NumericId::default(),
        name: name.into(),
    }
}

fn not_filled(err: &diesel::result::Error) -> bool {
    matches!(err, diesel::result::Error::SerializationError(e) if e.is::<NotFilled>())
}

fn an_unfilled_id_is_never_inserted<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewAccount>: diesel_seqgen::insert::Insert<accounts::table, C>,
    Vec<NewLedger>: diesel_seqgen::insert::Insert<accounts::table, C>,
    Vec<NewEntry>: diesel_seqgen::insert::Insert<entries::table, C>,
    for<'a> accounts::table: diesel::query_dsl::methods::LoadQuery<'a, C, (Id, NumericId, String)>,
    for<'a> diesel::query_builder::InsertStatement<
        accounts::table,
        <Vec<NewAccount> as Insertable<accounts::table>>::Values,
    >: diesel::query_dsl::methods::ExecuteDsl<C>,
{
    let table = "CREATE TABLE accounts (id VARCHAR(20) PRIMARY KEY, number BIGINT NOT NULL UNIQUE, name VARCHAR(20) NOT NULL)";
    let scratch = common::scratch_with_table(&db, "id_types", table, None);
    let mut conn = scratch.connect();

    // Out of habit: plain Diesel on records seqgen has not filled, one and a bulk.
    for rows in [vec![account("a")], vec![account("b"), account("c")]] {
        let err = diesel::insert_into(accounts::table)
            .values(rows)
            .execute(&mut conn)
            .unwrap_err();
        assert!(not_filled(&err), "{err:?}");
        assert!(
            err.to_string().contains("diesel_seqgen::assign_ids"),
            "{err}"
        );
    }
    let stored: Vec<(Id, NumericId, String)> = accounts::table.load(&mut conn).unwrap();
    assert!(stored.is_empty(), "{stored:?}");

    // seqgen's doors fill them.
    let mut rows = vec![account("d"), account("e")];
    diesel_seqgen::insert_into(accounts::table)
        .values(&mut rows)
        .execute(&mut conn)
        .unwrap();
    assert_eq!((rows[1].id.as_str(), rows[1].number.get()), ("A000002", 2));
    let mut filled = vec![account("f")];
    diesel_seqgen::assign_ids(&mut conn, &mut filled).unwrap();
    diesel::insert_into(accounts::table)
        .values(filled)
        .execute(&mut conn)
        .unwrap();
    // Gapless, twice: two fields, each numbered before the insert.
    for expected in ["L000001", "L000002"] {
        let mut ledger = vec![NewLedger {
            id: Id::default(),
            number: NumericId::default(),
            name: "l".into(),
        }];
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(accounts::table)
                .values(&mut ledger)
                .execute(conn)
        })
        .unwrap();
        assert_eq!(ledger[0].id, expected);
        assert!(ledger[0].number.is_filled());
    }
    // One gapless field, twice: on PostgreSQL the second takes the one-statement insert.
    conn.batch_execute(
        "CREATE TABLE entries (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) NOT NULL)",
    )
    .unwrap();
    for expected in ["E000001", "E000002"] {
        let mut entry = vec![NewEntry {
            id: Id::default(),
            name: "e".into(),
        }];
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(entries::table)
                .values(&mut entry)
                .execute(conn)
        })
        .unwrap();
        assert_eq!(entry[0].id, expected);
    }

    let mut stored: Vec<(Id, NumericId, String)> = accounts::table.load(&mut conn).unwrap();
    stored.sort();
    let ids: Vec<&str> = stored.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["A000001", "A000002", "A000003", "L000001", "L000002"]);

    // A row inserted with an empty ID by other means is what `seqgen check` reports.
    let spec = diesel_seqgen::Spec::builder("id_types_accounts")
        .prefix("A")
        .date("")
        .build()
        .unwrap();
    let ids = admin::IdColumn::of(accounts::id);
    assert_eq!(admin::check(&mut conn, &spec, ids).unwrap().empty, 0);
    conn.batch_execute("INSERT INTO accounts (id, number, name) VALUES ('', 99, 'x')")
        .unwrap();
    let found = admin::check(&mut conn, &spec, ids).unwrap();
    assert_eq!((found.empty, found.ids, found.unparsed), (1, 5, 2));
}
