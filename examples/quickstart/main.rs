//! Quickstart: the three models of the source designs on embedded SQLite.
//!
//! `cargo run --example quickstart [-- PATH]` — run it twice: the numbering continues where
//! the first run stopped.

use diesel::prelude::*;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use diesel_seqgen::DistributedId;

/// This application's own tables (users, menus, orders).
const APP_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

diesel::table! { users (id) { id -> Text, name -> Text } }
diesel::table! { menus (id) { id -> Text, title -> Text } }
diesel::table! { orders (order_no) { order_no -> Text, amount -> BigInt } }

/// `U` + `%Y%m%d` + 6 digits: U20261121000001.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = users)]
struct NewUser {
    #[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6, batch = 100)]
    id: String,
    name: String,
}

/// `MENU` + no date + 6 digits: MENU000001.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = menus)]
struct NewMenu {
    #[distributed_id(prefix = "MENU", date = "", pad = 6)]
    id: String,
    title: String,
}

/// `ORD` + `%y%m` + 4 digits: ORD26110001.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = orders)]
struct NewOrder {
    #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4)]
    order_no: String,
    amount: i64,
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let path = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("seqgen-quickstart.db"));
    println!("database: {}", path.display());
    let mut conn = SqliteConnection::establish(path.to_str().ok_or("non-UTF-8 temp dir")?)?;
    diesel_seqgen::sqlite::configure(&mut conn)?;
    // seqgen's db_key table, then the application's tables, as one migration source.
    conn.run_pending_migrations(diesel_seqgen::migrations::with_app_migrations(
        APP_MIGRATIONS,
    ))?;

    // One row: the ID is filled just before the insert and readable afterwards.
    let mut ada = NewUser {
        id: String::new(),
        name: "Ada".into(),
    };
    diesel_seqgen::insert_into(users::table)
        .values(&mut ada)
        .execute(&mut conn)?;
    println!("user:   {}", ada.id);
    // A bulk: one reservation for the whole Vec.
    let mut team: Vec<NewUser> = ["Grace", "Edsger", "Barbara"]
        .map(|name| NewUser {
            id: String::new(),
            name: name.into(),
        })
        .into();
    diesel_seqgen::insert_into(users::table)
        .values(&mut team)
        .execute(&mut conn)?;
    println!("users:  {}", ids(team.iter().map(|u| &u.id)));

    // The explicit hook, then plain Diesel.
    let mut tea = NewMenu {
        id: String::new(),
        title: "Tea".into(),
    };
    diesel_seqgen::assign_ids(&mut conn, &mut tea)?;
    diesel::insert_into(menus::table)
        .values(&tea)
        .execute(&mut conn)?;
    println!("menu:   {}", tea.id);
    let mut menu: Vec<NewMenu> = ["Cake", "Scones"]
        .map(|title| NewMenu {
            id: String::new(),
            title: title.into(),
        })
        .into();
    diesel_seqgen::assign_ids(&mut conn, &mut menu)?;
    diesel::insert_into(menus::table)
        .values(&menu)
        .execute(&mut conn)?;
    println!("menus:  {}", ids(menu.iter().map(|m| &m.id)));

    let mut order = NewOrder {
        order_no: String::new(),
        amount: 1250,
    };
    diesel_seqgen::insert_into(orders::table)
        .values(&mut order)
        .execute(&mut conn)?;
    println!("order:  {}", order.order_no);
    let mut more: Vec<NewOrder> = (1..=3)
        .map(|i| NewOrder {
            order_no: String::new(),
            amount: i * 100,
        })
        .collect();
    diesel_seqgen::insert_into(orders::table)
        .values(&mut more)
        .execute(&mut conn)?;
    println!("orders: {}", ids(more.iter().map(|o| &o.order_no)));

    // A clean shutdown: the numbers reserved but not handed out go back to their counters.
    let given_back = diesel_seqgen::global::release(&mut conn)?;
    println!(
        "\nGave {given_back} unused numbers back: run it again and the numbering continues \
         right after these (a process that stops without `release` leaves holes, never \
         duplicates)."
    );
    Ok(())
}

fn ids<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    ids.map(String::as_str).collect::<Vec<_>>().join(" ")
}
