//! Diesel's insert as it renders it, parsed: the plain shape `insert_into(t).values(…)` writes,
//! for the statements that rewrite it (`one_statement.rs`, `asserted.rs`). Anything else (a
//! `DEFAULT` for a `None`, an expression, `RETURNING`, `ON CONFLICT`) is refused, and the
//! caller takes the usual path.
//!
//! The grammar read, with any whitespace between tokens, and no `/*` or `*/` anywhere (the
//! rewritten statements walk Diesel's insert inside a comment); fuzzed by
//! `fuzz/fuzz_targets/rendered_insert.rs`:
//!
//! ```text
//! insert = "INSERT" "INTO" name { "." name } "(" name { "," name } ")" "VALUES" row { "," row }
//! row    = "(" param { "," param } ")"          as many as the columns
//! name   = q { any character but q | q q } q    q is `"` on PostgreSQL, `` ` `` on MySQL
//! param  = "$" digits                           PostgreSQL: $1, $2, … in order
//!        | "?"                                  MySQL
//! ```

// Only the server backends rewrite inserts.
#![cfg_attr(not(any(seqgen_pg, seqgen_mysql)), allow(dead_code))]

use std::sync::OnceLock;

use diesel::query_builder::{QueryBuilder, QueryFragment};

/// Returned, before anything is sent, when an insert is not of the shape a statement rewrites
/// (the text says which statement): the caller then takes the usual path.
#[derive(Debug)]
pub(crate) struct NotRewritten(pub(crate) &'static str);

impl NotRewritten {
    pub(crate) fn error(why: &'static str) -> diesel::result::Error {
        diesel::result::Error::QueryBuilderError(Box::new(NotRewritten(why)))
    }
}

impl std::fmt::Display for NotRewritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for NotRewritten {}

/// Whether `e` is [`NotRewritten`]: nothing was sent.
pub(crate) fn is_not_rewritten(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::QueryBuilderError(e) if e.is::<NotRewritten>())
}

/// Diesel's insert as rendered and parsed, at most once: a statement is walked several times.
#[derive(Default)]
pub(crate) struct RenderedOnce(OnceLock<Option<Rendered>>);

impl RenderedOnce {
    /// `insert` as `DB` writes it, parsed in `dialect`; `None` when it is not of the plain shape.
    pub(crate) fn of<DB, S>(&self, insert: &S, dialect: Dialect) -> Option<&Rendered>
    where
        DB: diesel::backend::Backend + Default,
        DB::QueryBuilder: Default,
        S: QueryFragment<DB>,
    {
        self.0
            .get_or_init(|| {
                let mut builder = DB::QueryBuilder::default();
                insert.to_sql(&mut builder, &DB::default()).ok()?;
                Rendered::parse(&builder.finish(), dialect)
            })
            .as_ref()
    }
}

/// How a backend quotes names and writes bind parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `"name"`, `$1`.
    #[cfg_attr(not(seqgen_pg), allow(dead_code))]
    Postgres,
    /// `` `name` ``, `?`.
    Mysql,
}

impl Dialect {
    fn quote(self) -> char {
        match self {
            Dialect::Postgres => '"',
            Dialect::Mysql => '`',
        }
    }
}

/// Diesel's insert as written: `INSERT INTO <table> (<columns>) VALUES (<row>), …`, each
/// value a bind parameter.
#[derive(Debug, PartialEq)]
pub(crate) struct Rendered {
    /// As Diesel quoted it (`"schema"."table"`).
    pub(crate) table: String,
    /// As Diesel quoted them.
    pub(crate) columns: Vec<String>,
    /// Each row's values: `$1`, `$2`, … (`?` on MySQL).
    pub(crate) rows: Vec<Vec<String>>,
    dialect: Dialect,
}

impl Rendered {
    /// Parses what Diesel writes for `insert_into(table).values(records)`; `None` for
    /// anything else (a `DEFAULT`, an expression, `RETURNING`, a comment's delimiters).
    pub(crate) fn parse(sql: &str, dialect: Dialect) -> Option<Rendered> {
        if sql.contains("/*") || sql.contains("*/") {
            return None; // the rewritten statements walk it inside a comment
        }
        let mut tokens = Tokens {
            rest: sql,
            quote: dialect.quote(),
        };
        tokens.word("INSERT")?;
        tokens.word("INTO")?;
        let mut table = tokens.identifier()?.to_owned();
        while tokens.punct('.') {
            table.push('.');
            table.push_str(tokens.identifier()?);
        }
        tokens.expect('(')?;
        let mut columns = vec![tokens.identifier()?.to_owned()];
        while tokens.punct(',') {
            columns.push(tokens.identifier()?.to_owned());
        }
        tokens.expect(')')?;
        tokens.word("VALUES")?;
        let mut rows = Vec::new();
        loop {
            tokens.expect('(')?;
            let mut row = vec![tokens.parameter(dialect)?.to_owned()];
            while tokens.punct(',') {
                row.push(tokens.parameter(dialect)?.to_owned());
            }
            tokens.expect(')')?;
            if row.len() != columns.len() {
                return None;
            }
            rows.push(row);
            if !tokens.punct(',') {
                break;
            }
        }
        tokens.end()?;
        // The rewritten statements bind the values again in the order of the rows: PostgreSQL's
        // parameters must be numbered in that order (`$1, $2, …`), as Diesel numbers them.
        let in_order =
            rows.iter().flatten().enumerate().all(|(i, parameter)| {
                dialect == Dialect::Mysql || *parameter == format!("${}", i + 1)
            });
        if !in_order {
            return None;
        }
        Some(Rendered {
            table,
            columns,
            rows,
            dialect,
        })
    }

    /// The position of `column` (unquoted) among the columns (PostgreSQL's one-statement
    /// insert).
    #[cfg_attr(not(seqgen_pg), allow(dead_code))]
    pub(crate) fn position(&self, column: &str) -> Option<usize> {
        let quote = self.dialect.quote();
        self.columns
            .iter()
            .position(|quoted| unquote(quoted, quote).as_deref() == Some(column))
    }
}

/// `"a""b"` → `a"b` (with `quote` `"`).
#[cfg_attr(not(seqgen_pg), allow(dead_code))]
fn unquote(quoted: &str, quote: char) -> Option<String> {
    let inner = quoted.strip_prefix(quote)?.strip_suffix(quote)?;
    Some(inner.replace(&format!("{quote}{quote}"), &quote.to_string()))
}

/// A cursor over Diesel's rendering of an insert.
struct Tokens<'s> {
    rest: &'s str,
    quote: char,
}

impl<'s> Tokens<'s> {
    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn word(&mut self, word: &str) -> Option<()> {
        self.skip_space();
        let rest = self.rest.strip_prefix(word)?;
        if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            return None;
        }
        self.rest = rest;
        Some(())
    }

    fn punct(&mut self, c: char) -> bool {
        self.skip_space();
        match self.rest.strip_prefix(c) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    fn expect(&mut self, c: char) -> Option<()> {
        self.punct(c).then_some(())
    }

    /// A quoted identifier, quotes included.
    fn identifier(&mut self) -> Option<&'s str> {
        self.skip_space();
        let quote = self.quote;
        let body = self.rest.strip_prefix(quote)?;
        let mut end = 0;
        loop {
            let close = body[end..].find(quote)? + end;
            if body[close + 1..].starts_with(quote) {
                end = close + 2; // a doubled quote inside the name
                continue;
            }
            let (identifier, rest) = self.rest.split_at(close + 2);
            self.rest = rest;
            return Some(identifier);
        }
    }

    /// A bind parameter: `$` and digits, or `?`.
    fn parameter(&mut self, dialect: Dialect) -> Option<&'s str> {
        self.skip_space();
        let len = match dialect {
            Dialect::Mysql => self.rest.starts_with('?').then_some(1)?,
            Dialect::Postgres => {
                let digits = self.rest.strip_prefix('$')?;
                let len = digits
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(digits.len());
                if len == 0 {
                    return None;
                }
                len + 1
            }
        };
        let (parameter, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some(parameter)
    }

    fn end(&mut self) -> Option<()> {
        self.skip_space();
        self.rest.is_empty().then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(sql: &str) -> Option<Rendered> {
        Rendered::parse(sql, Dialect::Postgres)
    }

    #[test]
    fn parses_what_diesel_writes_for_one_row_and_for_several() {
        let one = pg(r#"INSERT INTO "invoices" ("id", "amount") VALUES ($1, $2)"#);
        assert_eq!(
            one,
            Some(Rendered {
                table: r#""invoices""#.into(),
                columns: vec![r#""id""#.into(), r#""amount""#.into()],
                rows: vec![vec!["$1".into(), "$2".into()]],
                dialect: Dialect::Postgres,
            })
        );
        let several =
            pg(r#"INSERT INTO "billing"."in""voices" ("amount", "id") VALUES ($1, $2), ($3, $4)"#)
                .unwrap();
        assert_eq!(several.table, r#""billing"."in""voices""#);
        assert_eq!(several.rows.len(), 2);
        assert_eq!(several.position("id"), Some(1));
        assert_eq!(several.position("amount"), Some(0));
        assert_eq!(several.position("ID"), None);
        let quoted = pg(r#"INSERT INTO "t" ("a""b") VALUES ($1)"#).unwrap();
        assert_eq!(quoted.position("a\"b"), Some(0));
    }

    #[test]
    fn parses_what_diesel_writes_on_mysql() {
        let two = Rendered::parse(
            "INSERT INTO `shop`.`or``ders` (`id`, `amount`) VALUES (?, ?), (?, ?)",
            Dialect::Mysql,
        )
        .unwrap();
        assert_eq!(two.table, "`shop`.`or``ders`");
        assert_eq!(two.rows, vec![vec!["?", "?"], vec!["?", "?"]]);
        assert_eq!(two.position("amount"), Some(1));
        for sql in [
            "INSERT INTO `t` (`id`, `note`) VALUES (?, DEFAULT)",
            "INSERT INTO `t` (`id`) VALUES (??)",
            "INSERT INTO \"t\" (\"id\") VALUES (?)",
            "INSERT INTO `t` (`id`) VALUES ($1)",
            "INSERT IGNORE INTO `t` (`id`) VALUES (?)",
            "REPLACE INTO `t` (`id`) VALUES (?)",
            "INSERT INTO `t` (`id`) VALUES (?) ON DUPLICATE KEY UPDATE `id` = ?",
        ] {
            assert_eq!(Rendered::parse(sql, Dialect::Mysql), None, "{sql}");
        }
    }

    #[test]
    fn leaves_anything_else_to_the_usual_path() {
        for sql in [
            r#"INSERT INTO "t" ("id", "note") VALUES ($1, DEFAULT)"#,
            r#"INSERT INTO "t" ("id") VALUES ($1) RETURNING "t"."id""#,
            r#"INSERT INTO "t" ("id") VALUES ($1) ON CONFLICT DO NOTHING"#,
            r#"INSERT INTO "t" ("id", "n") VALUES ($1, lower($2))"#,
            r#"INSERT INTO "t" ("id", "n") VALUES ($1)"#,
            r#"INSERT INTO "t" DEFAULT VALUES"#,
            r#"INSERT INTO "t*/" ("id") VALUES ($1)"#,
            r#"INSERT INTO "t" ("id") VALUES ($)"#,
            r#"INSERT INTO "t" ("a", "b") VALUES ($2, $1)"#,
            r#"INSERT INTO "t" ("id") VALUES ($01)"#,
            r#"INSERT INTO "t" ("id") VALUES ($1), ($3)"#,
            r#"INSERT INTO "t ("id") VALUES ($1)"#,
            r#"UPDATE "t" SET "id" = $1"#,
        ] {
            assert_eq!(pg(sql), None, "{sql}");
        }
    }
}
