//! Gapless invoice numbers, one voided and one lost, for `seqgen gaps` to find:
//!
//! ```text
//! cargo run --example audit
//! cargo run -p diesel-seqgen-cli -- gaps --database-url /tmp/seqgen-audit.db --key invoices --table invoices --column number
//! ```

use diesel::prelude::*;

diesel::table! {
    invoices (number) {
        number -> Text,
        amount -> BigInt,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let path = std::env::temp_dir().join("seqgen-audit.db");
    println!("database: {}", path.display());
    let mut conn = SqliteConnection::establish(path.to_str().ok_or("non-UTF-8 temp dir")?)?;
    diesel_seqgen::sqlite::configure(&mut conn)?;
    diesel_seqgen::run_migrations(&mut conn)?;
    diesel::sql_query(
        "CREATE TABLE IF NOT EXISTS invoices (number TEXT PRIMARY KEY, amount BIGINT NOT NULL)",
    )
    .execute(&mut conn)?;

    let spec = diesel_seqgen::Spec::builder("invoices")
        .prefix("INV")
        .date("%Y")
        .pad(6)
        .gapless()
        .build()?;
    // Five invoices, each number taken in the transaction that writes its row.
    let mut numbers = Vec::new();
    for amount in [1250, 300, 4100, 75, 990] {
        let number = conn.transaction(|conn| {
            let number = diesel_seqgen::global::next_id(conn, &spec)?;
            diesel::insert_into(invoices::table)
                .values((invoices::number.eq(&number), invoices::amount.eq(amount)))
                .execute(conn)?;
            Ok::<_, diesel_seqgen::Error>(number)
        })?;
        println!("issued: {number}");
        numbers.push(number);
    }

    // The second is cancelled the way an auditor accepts: voided, with a reason, in the same
    // transaction that removes it.
    conn.transaction(|conn| {
        diesel_seqgen::ledger::void(conn, &spec, &numbers[1], "customer cancelled the order")?;
        diesel::delete(invoices::table.find(&numbers[1])).execute(conn)?;
        Ok::<_, diesel_seqgen::Error>(())
    })?;
    println!("voided: {} (customer cancelled the order)", numbers[1]);

    // The fourth disappears without a word: what `seqgen gaps` is for.
    diesel::delete(invoices::table.find(&numbers[3])).execute(&mut conn)?;
    println!("lost:   {} (deleted by hand, no void)", numbers[3]);

    println!(
        "\nNow ask which numbers are missing and why:\n  \
         cargo run -p diesel-seqgen-cli -- gaps --database-url {} --key invoices --table invoices --column number",
        path.display()
    );
    Ok(())
}
