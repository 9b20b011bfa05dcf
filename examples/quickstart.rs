//! Quickstart: IDs from an embedded SQLite database, numbering that continues across runs.
//!
//! `cargo run --example quickstart`

use diesel::prelude::*;
use seqgen::Spec;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join("seqgen-quickstart.db");
    println!("database: {}", path.display());
    let mut conn = SqliteConnection::establish(path.to_str().ok_or("non-UTF-8 temp dir")?)?;
    seqgen::sqlite::configure(&mut conn)?;
    seqgen::run_migrations(&mut conn)?;

    let users = Spec::builder("users")
        .prefix("U")
        .date("%Y%m%d")
        .pad(6)
        .batch(100)
        .build()?;
    let menus = Spec::builder("menus")
        .prefix("MENU")
        .date("")
        .pad(6)
        .build()?;
    let orders = Spec::builder("orders")
        .prefix("ORD")
        .date("%y%m")
        .pad(4)
        .build()?;

    for spec in [&users, &menus, &orders] {
        println!(
            "{:<7} one: {}",
            spec.key(),
            seqgen::next_id(&mut conn, spec)?
        );
        println!(
            "{:<7} bulk: {:?}",
            "",
            seqgen::next_ids(&mut conn, spec, 3)?
        );
    }
    println!("run it again: the numbering goes on (holes are numbers this run had cached)");
    Ok(())
}
