//! A table of Diesel's `table!` known by its SQL name, so that Rust code names tables and
//! columns as Diesel types (`invoices::number`) instead of strings a typo turns into a run-time
//! SQL error. Diesel's public API gives a column's name (`Column::NAME`) but not a table's: the
//! table's `FROM` fragment is rendered with a backend compiled in, and its quotes taken off.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use diesel::query_builder::{QueryBuilder, QueryFragment};

// Any backend renders a table's name the same, but for the quote character.
#[cfg(feature = "sqlite")]
type Rendering = diesel::sqlite::Sqlite;
#[cfg(all(not(feature = "sqlite"), seqgen_pg))]
type Rendering = diesel::pg::Pg;
#[cfg(all(not(feature = "sqlite"), not(seqgen_pg), seqgen_mysql))]
type Rendering = diesel::mysql::Mysql;

/// A table of Diesel's `table!` (`invoices::table`), whose SQL name seqgen reads: implemented
/// for every such table. With a schema (`table! { accounting.invoices … }`) the name is
/// `accounting.invoices`, as the string forms of seqgen's functions take it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a table of Diesel's `table!`",
    label = "give a column of a `table!` table, like `invoices::number`"
)]
pub trait NamedTable: diesel::Table + 'static {
    /// The table's SQL name, `schema.table` with a schema.
    fn sql_name() -> &'static str;
}

#[cfg(any(feature = "sqlite", seqgen_pg, seqgen_mysql))]
impl<T> NamedTable for T
where
    T: diesel::Table + Default + QueryFragment<Rendering> + 'static,
{
    fn sql_name() -> &'static str {
        // Rendered once per table type and kept for the process, as the `table!` it comes
        // from is: names stay `&str`, and the types that hold them `Copy`.
        static NAMES: OnceLock<Mutex<HashMap<TypeId, &'static str>>> = OnceLock::new();
        let mut names = NAMES
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        names.entry(TypeId::of::<T>()).or_insert_with(|| {
            let mut sql = <Rendering as diesel::backend::Backend>::QueryBuilder::default();
            // A `table!` table renders its quoted name; nothing can fail in that.
            let rendered = match T::default().to_sql(&mut sql, &Rendering::default()) {
                Ok(()) => unquote(&sql.finish()),
                Err(_) => String::new(),
            };
            Box::leak(rendered.into_boxed_str())
        })
    }
}

/// `"schema"."table"` (or with backquotes) as `schema.table`: each quoted part without its
/// quotes, a doubled quote inside one read as one.
fn unquote(rendered: &str) -> String {
    let mut name = String::with_capacity(rendered.len());
    let mut chars = rendered.chars().peekable();
    let mut quote = None;
    while let Some(c) = chars.next() {
        match quote {
            None if c == '"' || c == '`' => quote = Some(c),
            None => name.push(c), // the `.` between schema and table
            Some(q) if c == q && chars.peek() == Some(&q) => {
                chars.next();
                name.push(q);
            }
            Some(q) if c == q => quote = None,
            Some(_) => name.push(c),
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn quoted_names_read_back() {
        assert_eq!(unquote("\"invoices\""), "invoices");
        assert_eq!(unquote("`accounting`.`invoices`"), "accounting.invoices");
        assert_eq!(unquote("\"odd\"\"name\""), "odd\"name");
        assert_eq!(unquote("`odd``name`"), "odd`name");
    }

    #[cfg(any(feature = "sqlite", seqgen_pg, seqgen_mysql))]
    #[test]
    fn a_tables_sql_name() {
        use super::NamedTable;
        diesel::table! { invoices (id) { id -> Integer } }
        diesel::table! { accounting.ledgers (id) { id -> Integer } }
        diesel::table! {
            #[sql_name = "Old Orders"]
            orders (id) { id -> Integer }
        }
        assert_eq!(invoices::table::sql_name(), "invoices");
        assert_eq!(ledgers::table::sql_name(), "accounting.ledgers");
        assert_eq!(orders::table::sql_name(), "Old Orders");
    }
}
