//! The scope printed in IDs (`format = "{scope}-{date}-{seq}"`): `ACME-2026-0001` and
//! `GLOBEX-2026-0001`, each scope counting from 1, on every door (own and default generator,
//! batched, gapless and numbered after the commit, the derive's insert as the default generator
//! comes and after `use_pool`), every ID read back to its scope, period and number through the
//! shape the key's row records.

use crate::common;

use common::{TestConnection, TestDb};
use diesel_seqgen::admin;
use diesel_seqgen::insert::Insert;
use diesel_seqgen::pending;
use diesel_seqgen::{DistributedId, Generator, Spec};

backend_tests!(
    each_scope_prints_its_own_ids_on_every_door,
    the_derive_prints_the_scope_through_insert_into,
    the_derive_prints_the_scope_through_insert_into_after_use_pool,
);

fn spec(key: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(key)
        .format("{scope}-{date}-{seq}")
        .date("")
        .pad(4)
        .scoped()
}

fn each_scope_prints_its_own_ids_on_every_door<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let own = Generator::new();
    let batched = spec(&db.key("batched")).build().unwrap();
    for scope in ["ACME", "GLOBEX"] {
        let ids = own.next_ids(&mut conn, batched.scope(scope), 2).unwrap();
        assert_eq!(ids, [format!("{scope}--0001"), format!("{scope}--0002")]);
    }
    let default = spec(&db.key("default")).build().unwrap();
    let id = diesel_seqgen::global::next_id(&mut conn, default.scope("AC-ME")).unwrap();
    assert_eq!(id, "AC-ME--0001");
    let parts = default.parse(&id).unwrap();
    assert_eq!(parts.scope.as_deref(), Some("AC-ME"));
    let gapless = spec(&db.key("gapless"))
        .date("%Y")
        .gapless()
        .build()
        .unwrap();
    for scope in ["ACME", "GLOBEX", "ACME"] {
        let id = conn
            .transaction(|conn| own.next_id(conn, gapless.scope(scope)))
            .unwrap();
        assert!(id.starts_with(&format!("{scope}-")), "{id}");
    }
    let last = conn
        .transaction(|conn| own.next_id(conn, gapless.scope("ACME")))
        .unwrap();
    assert!(last.ends_with("-0003"), "{last}");
    // The key's row records the shape: the tools read the scope back.
    let recorded = admin::recorded_spec(&mut conn, gapless.key()).unwrap();
    assert_eq!(recorded.shape(), "{scope}-{date:%Y}-{seq:4}{scoped}");
    let parts = recorded.parse(&last).unwrap();
    assert_eq!(parts.scope.as_deref(), Some("ACME"));
    assert_eq!(recorded.counter_of(&parts), Some(3));
    // An empty scope is refused, as for every scoped key.
    assert!(own.next_id(&mut conn, batched.scope("")).is_err());
}

diesel::table! {
    scoped_docs (id) {
        id -> BigInt,
        order_no -> Text,
        invoice_no -> Text,
        reference -> Nullable<Text>,
        company -> Text,
    }
}

#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = scoped_docs)]
struct NewDoc {
    #[distributed_id(
        key = "ps_orders",
        format = "{scope}/{seq}",
        date = "",
        pad = 6,
        scope = "company"
    )]
    order_no: String,
    #[distributed_id(
        key = "ps_invoices",
        format = "{scope}-{date}-{seq}",
        date = "%Y",
        pad = 4,
        scope = "company",
        gapless
    )]
    invoice_no: String,
    #[distributed_id(
        key = "ps_references",
        format = "R-{scope}-{seq}",
        date = "",
        pad = 5,
        scope = "company",
        gapless = "deferred"
    )]
    reference: Option<String>,
    company: String,
}

fn the_derive_prints_the_scope_through_insert_into<C>(db: TestDb<C>)
where
    C: TestConnection,
    Vec<NewDoc>: Insert<scoped_docs::table, C>,
{
    derive_prints_the_scope(db, false);
}

fn the_derive_prints_the_scope_through_insert_into_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection,
    Vec<NewDoc>: Insert<scoped_docs::table, C>,
{
    derive_prints_the_scope(db, true);
}

/// Two rows of ACME one by one, then a bulk of GLOBEX, ACME, GLOBEX; the references numbered
/// after the commit.
fn derive_prints_the_scope<C>(db: TestDb<C>, use_pool: bool)
where
    C: TestConnection,
    Vec<NewDoc>: Insert<scoped_docs::table, C>,
{
    let id = match C::NAME {
        "sqlite" => "id INTEGER PRIMARY KEY",
        "postgres" => "id BIGSERIAL PRIMARY KEY",
        _ => "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    };
    let table = format!(
        "CREATE TABLE scoped_docs ({id}, order_no VARCHAR(30) NOT NULL UNIQUE, \
         invoice_no VARCHAR(30) NOT NULL UNIQUE, reference VARCHAR(30) UNIQUE, \
         company VARCHAR(20) NOT NULL)"
    );
    let scratch = common::scratch_with_table(&db, "printed_scope", &table, None);
    if use_pool {
        diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    }
    let mut conn = scratch.connect();
    let doc = |company: &str| NewDoc {
        order_no: String::new(),
        invoice_no: String::new(),
        reference: None,
        company: company.to_owned(),
    };
    let mut insert = |mut rows: Vec<NewDoc>| {
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(scoped_docs::table)
                .values(&mut rows)
                .execute(conn)
        })
        .unwrap();
    };
    insert(vec![doc("ACME")]);
    insert(vec![doc("ACME")]);
    insert(vec![doc("GLOBEX"), doc("ACME"), doc("GLOBEX")]);
    let (spec, rows) = pending::rows_of::<NewDoc>(scoped_docs::id).unwrap();
    let numbered = pending::number_pending(&mut conn, spec, rows).unwrap();
    assert_eq!(numbered.rows, 5);

    let mut column = |name: &str| {
        let mut texts = C::texts(
            &mut conn,
            &format!("SELECT {name} AS text FROM scoped_docs"),
        );
        texts.sort();
        texts
    };
    assert_eq!(
        column("order_no"),
        [
            "ACME/000001",
            "ACME/000002",
            "ACME/000003",
            "GLOBEX/000001",
            "GLOBEX/000002"
        ]
    );
    let year = chrono::Utc::now().format("%Y").to_string();
    let invoices: Vec<String> = column("invoice_no")
        .iter()
        .map(|id| id.replacen(&format!("-{year}-"), "-Y-", 1))
        .collect();
    assert_eq!(
        invoices,
        [
            "ACME-Y-0001",
            "ACME-Y-0002",
            "ACME-Y-0003",
            "GLOBEX-Y-0001",
            "GLOBEX-Y-0002"
        ]
    );
    assert_eq!(
        column("reference"),
        [
            "R-ACME-00001",
            "R-ACME-00002",
            "R-ACME-00003",
            "R-GLOBEX-00001",
            "R-GLOBEX-00002"
        ]
    );
    // Each reads back to its scope through the shape its key's row records.
    let mut conn = scratch.connect();
    for key in ["ps_orders", "ps_invoices", "ps_references"] {
        let recorded = admin::recorded_spec(&mut conn, key).unwrap();
        assert!(recorded.prints_scope(), "{key}: {}", recorded.shape());
    }
}
