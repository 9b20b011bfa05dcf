//! Invoice numbers that start at 1 for every company: a scoped, gapless key.
//!
//! ```text
//! cargo run --example scoped
//! cargo run -p diesel-seqgen-cli -- keys --database-url /tmp/seqgen-scoped.db --key invoices
//! cargo run -p diesel-seqgen-cli -- gaps --database-url /tmp/seqgen-scoped.db --key invoices --table invoices \
//!     --column number --scope 2 --scope-column company_id
//! ```

use diesel::prelude::*;
use diesel_seqgen::DistributedId;

diesel::table! {
    invoices (company_id, number) {
        company_id -> BigInt,
        number -> Text,
        amount -> BigInt,
    }
}

/// `scope = "company_id"`: every company has its own counter; the number alone repeats across
/// companies, so the table's key is the pair.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = invoices)]
struct NewInvoice {
    company_id: i64,
    #[distributed_id(prefix = "INV", date = "%Y", pad = 4, gapless, scope = "company_id")]
    number: String,
    amount: i64,
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let path = std::env::temp_dir().join("seqgen-scoped.db");
    println!("database: {}", path.display());
    let mut conn = SqliteConnection::establish(path.to_str().ok_or("non-UTF-8 temp dir")?)?;
    diesel_seqgen::sqlite::configure(&mut conn)?;
    diesel_seqgen::run_migrations(&mut conn)?;
    diesel::sql_query(
        "CREATE TABLE IF NOT EXISTS invoices (company_id BIGINT NOT NULL, number TEXT NOT NULL, \
         amount BIGINT NOT NULL, PRIMARY KEY (company_id, number))",
    )
    .execute(&mut conn)?;

    // One bulk insert across three companies: one reservation per company, in one transaction.
    let mut batch: Vec<NewInvoice> = [(1, 1250), (2, 300), (1, 4100), (3, 75), (2, 990), (1, 20)]
        .into_iter()
        .map(|(company_id, amount)| NewInvoice {
            company_id,
            number: String::new(),
            amount,
        })
        .collect();
    diesel_seqgen::insert_into(invoices::table)
        .values(&mut batch)
        .execute(&mut conn)?;
    for invoice in &batch {
        println!("company {}: {}", invoice.company_id, invoice.number);
    }

    // What company 2 issues next, without taking it (the field's spec, spelled as a `Spec`).
    let spec = diesel_seqgen::Spec::builder("invoices")
        .prefix("INV")
        .date("%Y")
        .pad(4)
        .gapless()
        .scoped()
        .build()?;
    let next = diesel_seqgen::global::peek_next(&mut conn, spec.scope("2"))?;
    println!("company 2 issues number {next} next");
    Ok(())
}
