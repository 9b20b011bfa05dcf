//! One state after a failed insert, whatever its form: `diesel_seqgen::insert_into` of a bulk
//! that the table refuses (a unique violation on another column) leaves every record's ID
//! unset, on a plain connection, on `&mut pooled`, on `&mut *pooled` and with a generator of
//! one's own, batched and gapless, after `use_pool` as the README starts an app. Run again
//! with the bad record mended, the insert takes new numbers; the gapless ones stay exactly
//! 1..N. (Once, `&mut pooled` and `.with_generator` kept the batched IDs and the others
//! cleared them; kept gapless IDs would be inserted again by a retry: a duplicate.)

use crate::common;

use common::{TestConnection, TestDb};
use diesel::r2d2::{ConnectionManager, PooledConnection};
use diesel_seqgen::insert::Insert;
use diesel_seqgen::{DistributedId, Generator};

diesel::table! {
    members (id) {
        id -> Text,
        email -> Text,
    }
}

diesel::table! {
    receipts (id) {
        id -> Text,
        email -> Text,
    }
}

#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = members)]
struct Member {
    #[distributed_id(prefix = "M", date = "", pad = 6)]
    id: String,
    email: String,
}

#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = receipts)]
struct Receipt {
    #[distributed_id(prefix = "R", date = "", pad = 6, gapless)]
    id: String,
    email: String,
}

/// A record of either model.
trait Record {
    fn new(email: String) -> Self;
    fn id(&self) -> &str;
}

impl Record for Member {
    fn new(email: String) -> Self {
        Member {
            id: String::new(),
            email,
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

impl Record for Receipt {
    fn new(email: String) -> Self {
        Receipt {
            id: String::new(),
            email,
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

backend_tests!(a_failed_bulk_leaves_the_records_unset_on_every_form);

type Pooled<C> = PooledConnection<ConnectionManager<C>>;

const FORMS: [&str; 4] = ["plain", "&mut pooled", "&mut *pooled", "own generator"];

fn a_failed_bulk_leaves_the_records_unset_on_every_form<C>(db: TestDb<C>)
where
    C: TestConnection,
    Vec<Member>: Insert<members::table, C> + Insert<members::table, Pooled<C>>,
    Vec<Receipt>: Insert<receipts::table, C> + Insert<receipts::table, Pooled<C>>,
{
    let scratch = common::scratch_with_table(
        &db,
        "failed_insert",
        "CREATE TABLE members (id VARCHAR(20) PRIMARY KEY, email VARCHAR(60) NOT NULL UNIQUE); \
         CREATE TABLE receipts (id VARCHAR(20) PRIMARY KEY, email VARCHAR(60) NOT NULL UNIQUE)",
        None,
    );
    diesel_seqgen::global::use_pool(scratch.pool(3)).unwrap();
    let pool = scratch.pool(2);
    let own = Generator::new(); // an own generator as a user builds one: the defaults
    let mut plain = scratch.connect();
    let mut receipts = 0;
    for (i, form) in FORMS.iter().enumerate() {
        let mut pooled = pool.get().unwrap();
        // The insert of `rows` on this form.
        let mut members = |rows: &mut Vec<Member>| {
            let insert = diesel_seqgen::insert_into(members::table).values(rows);
            match i {
                0 => insert.execute(&mut plain),
                1 => insert.execute(&mut pooled),
                2 => insert.execute(&mut *pooled),
                _ => insert.with_generator(&own).execute(&mut *pooled),
            }
        };
        bulk_then_mended(form, "member", &mut members);
        let mut pooled = pool.get().unwrap();
        let mut plain = scratch.connect();
        let mut receipts_of = |rows: &mut Vec<Receipt>| {
            let insert = diesel_seqgen::insert_into(receipts::table).values(rows);
            match i {
                0 => insert.execute(&mut plain),
                1 => insert.execute(&mut pooled),
                2 => insert.execute(&mut *pooled),
                _ => insert.with_generator(&own).execute(&mut *pooled),
            }
        };
        receipts += bulk_then_mended(form, "receipt", &mut receipts_of);
    }
    // The gapless numbers of the failed bulks went back: the table holds exactly 1..N.
    let mut ids = C::texts(&mut scratch.connect(), "SELECT id AS text FROM receipts");
    ids.sort();
    let expected: Vec<String> = (1..=receipts).map(|n| format!("R{n:06}")).collect();
    assert_eq!(ids, expected);
}

/// A row taking `taken-…`, then a bulk of three whose second is a repeat of it: refused, and
/// every record unset; mended, inserted, every record set. How many rows went in.
fn bulk_then_mended<R: Record>(
    form: &str,
    what: &str,
    insert: &mut dyn FnMut(&mut Vec<R>) -> diesel_seqgen::Result<usize>,
) -> usize {
    let taken = format!("taken-{what}-{form}");
    insert(&mut vec![R::new(taken.clone())]).unwrap();
    let mut bulk: Vec<R> = ["a", "", "b"]
        .iter()
        .map(|part| match *part {
            "" => R::new(taken.clone()),
            part => R::new(format!("{part}-{what}-{form}")),
        })
        .collect();
    let refused = insert(&mut bulk);
    assert!(
        refused.is_err(),
        "{what} on {form}: the repeat was inserted"
    );
    let ids: Vec<&str> = bulk.iter().map(R::id).collect();
    assert_eq!(
        ids,
        ["", "", ""],
        "{what} on {form}: IDs left after a failed insert"
    );
    bulk[1] = R::new(format!("c-{what}-{form}"));
    assert_eq!(insert(&mut bulk).unwrap(), 3, "{what} on {form}");
    assert!(
        bulk.iter().all(|r| !r.id().is_empty()),
        "{what} on {form}: an ID left unset after the insert"
    );
    4
}

/// The same on diesel-async (`diesel_seqgen::nonblocking::insert_into`): a plain connection,
/// `&mut pooled` (deadpool's object), `&mut *pooled` and a generator of one's own, after
/// `nonblocking::use_pool`.
macro_rules! async_failed_bulk {
    ($name:ident, $features:meta, $conn:ty, $sync:ty) => {
        #[cfg($features)]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            use diesel_async::pooled_connection::deadpool::Pool;
            use diesel_async::pooled_connection::AsyncDieselConnectionManager;
            use diesel_async::AsyncConnection;
            use diesel_seqgen::nonblocking as sq;

            let Some(db) = TestDb::<$sync>::open("failed_insert_async") else {
                return;
            };
            let scratch = common::scratch_with_table(
                &db,
                "failed_async",
                "CREATE TABLE members (id VARCHAR(20) PRIMARY KEY, email VARCHAR(60) NOT NULL UNIQUE); \
                 CREATE TABLE receipts (id VARCHAR(20) PRIMARY KEY, email VARCHAR(60) NOT NULL UNIQUE)",
                None,
            );
            let pool = |size| {
                let manager = AsyncDieselConnectionManager::<$conn>::new(&scratch.url);
                Pool::builder(manager).max_size(size).build().unwrap()
            };
            sq::use_pool(pool(2)).await.unwrap();
            let own = sq::Generator::from(Generator::new());
            let (tasks, mut plain) = (pool(2), <$conn>::establish(&scratch.url).await.unwrap());
            // Each step of `bulk_then_mended`, on the insert `$insert` of `rows`.
            macro_rules! steps {
                ($model:ident, $what:literal, $form:expr, |$rows:ident| $insert:expr) => {{
                    let taken = format!("taken-{}-{}", $what, $form);
                    let $rows = &mut vec![<$model as Record>::new(taken.clone())];
                    $insert.await.unwrap();
                    let $rows = &mut ["a", "", "b"]
                        .iter()
                        .map(|part| match *part {
                            "" => <$model as Record>::new(taken.clone()),
                            part => <$model as Record>::new(format!("{part}-{}-{}", $what, $form)),
                        })
                        .collect::<Vec<_>>();
                    assert!($insert.await.is_err(), "{} on {}: the repeat was inserted", $what, $form);
                    let ids: Vec<&str> = $rows.iter().map(Record::id).collect();
                    assert_eq!(ids, ["", "", ""], "{} on {}: IDs left after a failed insert", $what, $form);
                    $rows[1] = <$model as Record>::new(format!("c-{}-{}", $what, $form));
                    assert_eq!($insert.await.unwrap(), 3, "{} on {}", $what, $form);
                    assert!($rows.iter().all(|r| !r.id().is_empty()));
                }};
            }
            for form in FORMS {
                let mut pooled = tasks.get().await.unwrap();
                match form {
                    "plain" => {
                        steps!(Member, "member", form, |rows| sq::insert_into(members::table).values(rows).execute(&mut plain));
                        steps!(Receipt, "receipt", form, |rows| sq::insert_into(receipts::table).values(rows).execute(&mut plain));
                    }
                    "&mut pooled" => {
                        steps!(Member, "member", form, |rows| sq::insert_into(members::table).values(rows).execute(&mut pooled));
                        steps!(Receipt, "receipt", form, |rows| sq::insert_into(receipts::table).values(rows).execute(&mut pooled));
                    }
                    "&mut *pooled" => {
                        steps!(Member, "member", form, |rows| sq::insert_into(members::table).values(rows).execute(&mut *pooled));
                        steps!(Receipt, "receipt", form, |rows| sq::insert_into(receipts::table).values(rows).execute(&mut *pooled));
                    }
                    _ => {
                        steps!(Member, "member", form, |rows| sq::insert_into(members::table).values(rows).with_generator(&own).execute(&mut *pooled));
                        steps!(Receipt, "receipt", form, |rows| sq::insert_into(receipts::table).values(rows).with_generator(&own).execute(&mut *pooled));
                    }
                }
            }
            let mut ids = <$sync as TestConnection>::texts(&mut scratch.connect(), "SELECT id AS text FROM receipts");
            ids.sort();
            let expected: Vec<String> = (1..=16).map(|n| format!("R{n:06}")).collect();
            assert_eq!(ids, expected);
        }
    };
}

async_failed_bulk!(
    async_postgres_a_failed_bulk_leaves_the_records_unset_on_every_form,
    all(
        feature = "async-postgres",
        feature = "postgres",
        feature = "deadpool"
    ),
    diesel_async::AsyncPgConnection,
    diesel::PgConnection
);
async_failed_bulk!(
    async_mysql_a_failed_bulk_leaves_the_records_unset_on_every_form,
    all(
        feature = "async-mysql",
        feature = "mysql",
        feature = "deadpool"
    ),
    diesel_async::AsyncMysqlConnection,
    diesel::MysqlConnection
);
