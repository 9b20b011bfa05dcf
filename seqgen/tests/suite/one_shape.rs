//! One shape per key at every call: while a generator holds a block of a key in memory, a spec
//! of another shape on that key (another obfuscation key, obfuscated or plain, another pad,
//! prefix or date pattern) is refused with `Error::ShapeChanged` before any number is handed
//! out, on every door (cached, bulk, scoped, gapless, `peek_next`, own and default generator),
//! and the first spec then continues without a repeat. The async twin is in `nonblocking.rs`.

use crate::common;

use common::{assert_distinct, TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    another_shape_is_refused_while_a_block_is_held,
    another_shape_is_refused_in_bulks_scopes_gapless_and_peeks,
    two_models_on_one_key_are_one_shape,
);

const KEY_A: &str = "0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e";
const KEY_B: &str = "9e7c5a3f1d0b8e6c4a2f7d5b3e1c9a0f";

/// How many ways [`mutation`] knows.
pub const MUTATIONS: usize = 5;

/// Way `i` of the five a second spec on key `key` can differ in shape: (name, first, second),
/// `build` setting the rest (so that the scoped and gapless doors take the same pairs).
pub fn mutation(
    i: usize,
    key: &str,
    build: impl Fn(diesel_seqgen::SpecBuilder) -> diesel_seqgen::SpecBuilder,
) -> (&'static str, Spec, Spec) {
    mutations(key, build).swap_remove(i)
}

fn mutations(
    key: &str,
    build: impl Fn(diesel_seqgen::SpecBuilder) -> diesel_seqgen::SpecBuilder,
) -> Vec<(&'static str, Spec, Spec)> {
    let base = |prefix: &str, date: &str, pad: u32| {
        build(Spec::builder(key).prefix(prefix).date(date).pad(pad))
    };
    let pairs = [
        (
            "obfuscation key A then B",
            base("OB", "", 3).obfuscate(KEY_A),
            base("OB", "", 3).obfuscate(KEY_B),
        ),
        (
            "obfuscated then plain",
            base("OB", "", 3).obfuscate(KEY_A),
            base("OB", "", 3),
        ),
        ("pad 4 then 6", base("Q", "", 4), base("Q", "", 6)),
        ("prefix Q then Z", base("Q", "", 4), base("Z", "", 4)),
        (
            "date pattern changed",
            base("D", "%Y", 4),
            base("D", "%y", 6),
        ),
    ];
    pairs
        .into_iter()
        .map(|(name, first, second)| (name, first.build().unwrap(), second.build().unwrap()))
        .collect()
}

/// The counter behind an ID of `spec`.
pub fn counter(spec: &Spec, id: &str) -> u64 {
    spec.counter_of(&spec.parse(id).unwrap()).unwrap()
}

/// Asserts that `result` is the refusal of `second` in favour of `first`'s recorded shape.
pub fn assert_refused<T: std::fmt::Debug>(
    result: diesel_seqgen::Result<T>,
    first: &Spec,
    second: &Spec,
    case: &str,
) {
    match result {
        Err(Error::ShapeChanged {
            recorded,
            requested,
            ..
        }) => {
            assert_eq!(recorded, first.shape(), "{case}");
            assert_eq!(requested, second.shape(), "{case}");
        }
        other => panic!("{case}: {second:?} was not refused: {other:?}"),
    }
}

/// The cases on the cached path: the first spec is served once (its block of 100
/// stays in memory), the second is refused, then the first continues at 2, 3, … on the same
/// generator. On a generator of one's own and on the default one.
fn another_shape_is_refused_while_a_block_is_held<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    for door in ["own", "default"] {
        let own = Generator::new();
        let next_id = |conn: &mut C, spec: &Spec| match door {
            "own" => own.next_id(conn, spec),
            _ => diesel_seqgen::global::next_id(conn, spec),
        };
        for i in 0..MUTATIONS {
            let (case, first, second) = mutation(i, &db.key(&format!("{door}_{i}")), |b| b);
            let case = format!("{door} generator, {case}");
            let mut ids = vec![next_id(&mut conn, &first).unwrap()];
            assert_refused(next_id(&mut conn, &second), &first, &second, &case);
            // A number was not spent by the refusal either: the first spec goes on at 2.
            ids.push(next_id(&mut conn, &first).unwrap());
            assert_refused(next_id(&mut conn, &second), &first, &second, &case);
            ids.push(next_id(&mut conn, &first).unwrap());
            let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
            assert_eq!(counters, [1, 2, 3], "{case}: {ids:?}");
            assert_distinct(&ids);
        }
    }
}

/// The same pairs on the other doors: a bulk (`next_ids`), numbers (`next_numbers`), a scoped
/// key, gapless numbers in a transaction, and `peek_next`; each refused while the first spec's
/// block is held, and the first spec's numbers never repeat.
fn another_shape_is_refused_in_bulks_scopes_gapless_and_peeks<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let generator = Generator::new();
    for i in 0..MUTATIONS {
        let (case, first, second) = mutation(i, &db.key(&format!("bulk_{i}")), |b| b);
        let mut ids = generator.next_ids(&mut conn, &first, 3).unwrap();
        assert_refused(
            generator.next_ids(&mut conn, &second, 3),
            &first,
            &second,
            case,
        );
        assert_refused(generator.next_id(&mut conn, &second), &first, &second, case);
        assert_refused(
            generator.peek_next(&mut conn, &second),
            &first,
            &second,
            case,
        );
        assert_refused(
            generator.last_value(&mut conn, &second),
            &first,
            &second,
            case,
        );
        ids.extend(generator.next_ids(&mut conn, &first, 3).unwrap());
        let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
        assert_eq!(counters, [1, 2, 3, 4, 5, 6], "bulk, {case}");
        assert_eq!(generator.peek_next(&mut conn, &first).unwrap(), 101);
    }
    for i in 0..MUTATIONS {
        let (case, first, second) = mutation(i, &db.key(&format!("scoped_{i}")), |b| b.scoped());
        let mut ids = vec![generator.next_id(&mut conn, first.scope("acme")).unwrap()];
        for scope in ["acme", "globex"] {
            assert_refused(
                generator.next_id(&mut conn, second.scope(scope)),
                &first,
                &second,
                case,
            );
        }
        ids.push(generator.next_id(&mut conn, first.scope("acme")).unwrap());
        let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
        assert_eq!(counters, [1, 2], "scoped, {case}");
    }
    for i in 0..MUTATIONS {
        let (case, first, second) = mutation(i, &db.key(&format!("gapless_{i}")), |b| b.gapless());
        let mut ids = vec![conn
            .transaction(|conn| generator.next_id(conn, &first))
            .unwrap()];
        assert_refused(
            conn.transaction(|conn| generator.next_id(conn, &second)),
            &first,
            &second,
            case,
        );
        ids.push(
            conn.transaction(|conn| diesel_seqgen::global::next_id(conn, &first))
                .unwrap(),
        );
        let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
        assert_eq!(counters, [1, 2], "gapless, {case}");
    }
}

diesel::table! {
    parts (id) {
        id -> Text,
        name -> Text,
    }
}

/// Two models on one table whose attributes name the same key with another prefix: what a
/// second model written later, or a configuration changed in a running process, does.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = parts)]
struct NewPart {
    #[distributed_id(key = "one_shape_parts", prefix = "Q", date = "", pad = 4)]
    id: String,
    name: String,
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = parts)]
struct RenamedPart {
    #[distributed_id(key = "one_shape_parts", prefix = "Z", date = "", pad = 4)]
    id: String,
    name: String,
}

/// The derive's doors: `diesel_seqgen::insert_into` (a row and a bulk) and `assign_ids`, on the default
/// generator and one of one's own. The second model is refused while the first model's block
/// is held, nothing of it is inserted, and the first model's IDs go on without a repeat.
fn two_models_on_one_key_are_one_shape<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewPart>: diesel_seqgen::insert::Insert<parts::table, C>,
    Vec<RenamedPart>: diesel_seqgen::insert::Insert<parts::table, C>,
    for<'a> parts::table: diesel::query_dsl::methods::LoadQuery<'a, C, (String, String)>,
{
    let table = "CREATE TABLE parts (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) NOT NULL)";
    let scratch = common::scratch_with_table(&db, "one_shape", table, None);
    let mut conn = scratch.connect();
    let own = Generator::new();
    let part = || {
        vec![NewPart {
            id: String::new(),
            name: "part".into(),
        }]
    };
    let renamed = |n: usize| {
        (0..n)
            .map(|_| RenamedPart {
                id: String::new(),
                name: "renamed".into(),
            })
            .collect::<Vec<_>>()
    };
    fn refused<T: std::fmt::Debug>(result: diesel_seqgen::Result<T>) {
        match result {
            Err(Error::ShapeChanged { recorded, .. }) => assert_eq!(recorded, "Q{date:}{seq:4}"),
            other => panic!("the second model was not refused: {other:?}"),
        }
    }
    for round in 0..2 {
        let mut first = part();
        diesel_seqgen::insert_into(parts::table)
            .values(&mut first)
            .execute(&mut conn)
            .unwrap();
        refused(
            diesel_seqgen::insert_into(parts::table)
                .values(&mut renamed(1))
                .execute(&mut conn),
        );
        refused(
            diesel_seqgen::insert_into(parts::table)
                .values(&mut renamed(3))
                .with_generator(&own)
                .execute(&mut conn),
        );
        refused(diesel_seqgen::assign_ids(&mut conn, &mut renamed(2)));
        refused(own.assign_ids(&mut conn, &mut renamed(2)));
        let mut mine = part();
        diesel_seqgen::insert_into(parts::table)
            .values(&mut mine)
            .with_generator(&own)
            .execute(&mut conn)
            .unwrap();
        // The default generator's block goes on after the first row: 2, then 3 in round two.
        let mut second = part();
        diesel_seqgen::assign_ids(&mut conn, &mut second).unwrap();
        assert_eq!(
            [first[0].id.as_str(), &second[0].id],
            [
                format!("Q{:04}", 1 + 2 * round),
                format!("Q{:04}", 2 + 2 * round)
            ],
        );
        assert_eq!(mine[0].id, format!("Q{:04}", 101 + round));
    }
    let stored: Vec<(String, String)> = parts::table.load(&mut conn).unwrap();
    assert_eq!(stored.len(), 4, "{stored:?}");
    assert!(
        stored.iter().all(|(id, _)| id.starts_with('Q')),
        "{stored:?}"
    );
}
