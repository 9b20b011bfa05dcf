//! Which gapless inserts take their numbers in the insert statement itself (PostgreSQL), and
//! the numbering around that statement (`backend/one_statement.rs`): what the generator plans
//! before it is sent, and what it makes of the counter value it returns.
//!
//! When the counter may not advance (the period's capacity is used up, or seqgen has not
//! checked the session's timeline yet: `reserve::timeline`), no row is inserted and no row
//! comes back; the usual path follows. A failed statement aborts the caller's transaction, as
//! any failed statement does on PostgreSQL, which gives the numbers back.

use diesel::QueryResult;

use super::fill::{put_numbers, put_text};
use super::{DistributedId, IdField};
use crate::backend::one_statement::Plan;
use crate::backend::row_values::is_not_rewritten;
use crate::backend::Backend;
use crate::counter_range::largest;
use crate::engine::{formatted, numeric, Engine, InInsert};
use crate::error::Result;
use diesel_seqgen_core::{Mode, Overflow, Spec};

/// Whether IDs of `spec` can be taken by the insert itself, which prints them in SQL: a
/// gapless spec that waits, of a plain form ([`Spec::is_plain`]).
fn fits_one_statement(spec: &Spec, numeric: bool) -> bool {
    spec.is_plain()
        && matches!(spec.mode(), Mode::Gapless { nowait: false })
        // A widened counter can outgrow what the i64 form holds; `numeric` refuses it.
        && (!numeric || (spec.is_numeric() && spec.overflow() == Overflow::Error))
}

/// The field an insert of `rows` may number in its own statement on backend `B`, and whether
/// it holds the `i64` form: the records' only ID field, gapless, of a spec
/// [`fits_one_statement`] allows, unset in every record (a value the caller set is kept by
/// the usual path). `None` otherwise; nothing is sent either way.
pub(crate) fn field_of<B: Backend, Row: DistributedId>(rows: &mut [Row]) -> Option<Field> {
    // First what costs nothing: every insert of every backend passes here.
    if !B::ONE_STATEMENT_GAPLESS_INSERT {
        return None;
    }
    let [field] = Row::__id_fields() else {
        return None;
    };
    if field.unbuilt.is_some() {
        return None; // the fill that follows fails with why
    }
    if field.dated {
        return None; // the statement numbers in the clock's period
    }
    let numeric_form = rows.first_mut()?.__id_slot(0).is_numeric();
    let fits = fits_one_statement(&field.spec, numeric_form)
        && rows.iter_mut().all(|row| row.__id_slot(0).is_unset());
    fits.then_some((field, numeric_form))
}

/// The field an insert numbers itself, and whether in its numeric form.
pub(crate) type Field = (&'static IdField, bool);

/// An insert numbering its own rows, between the plan and what its statement returned.
pub(crate) struct Numbering {
    field: &'static IdField,
    numeric_form: bool,
    taking: InInsert,
}

impl Numbering {
    /// Starts numbering `n` rows of `field` (from [`field_of`]) from `generator`: the plan
    /// to build the statement from, or `None` (nothing sent) when the key cannot be numbered
    /// that way yet; see `Engine::start_in_insert`.
    pub(crate) fn start(
        generator: &Engine,
        (field, numeric_form): Field,
        n: usize,
    ) -> Result<Option<(Numbering, Plan)>> {
        let spec = &field.spec;
        let Some(taking) = generator.start_in_insert(spec, n as u64)? else {
            return Ok(None);
        };
        let plan = Plan {
            key: spec.key(),
            period: taking.period().text.clone(),
            // Both fit: `n <= largest <= i64::MAX` (checked by `start_in_insert`).
            count: n as i64,
            limit: (largest(spec) - n as u64) as i64,
            start: i64::try_from(spec.counter_start()).unwrap_or(i64::MAX),
            prefix: spec.prefix(),
            pad: i64::from(spec.pad()),
            column: field.column,
            index: field.index,
            struct_fields: field.struct_fields,
            numeric: numeric_form,
        };
        let numbering = Numbering {
            field,
            numeric_form,
            taking,
        };
        Ok(Some((numbering, plan)))
    }

    /// Ends it with what the statement returned, and sets the records' IDs (`rows` are the
    /// records it inserted, in order). `false` when the statement was refused before
    /// anything was sent, or inserted nothing: the caller takes the usual path.
    pub(crate) fn end<B: Backend, Row: DistributedId>(
        self,
        generator: &Engine,
        sent: QueryResult<Option<i64>>,
        rows: &mut [Row],
    ) -> Result<bool> {
        let last = match sent {
            Err(e) if is_not_rewritten(&e) => return Ok(false),
            // Past the capacity, or a session whose timeline seqgen has not checked yet:
            // nothing was written, and the usual path checks it and says which.
            Ok(None) => return Ok(false),
            Ok(Some(last)) => last,
            Err(e) => return Err(e.into()),
        };
        let Numbering {
            field,
            numeric_form,
            taking,
        } = self;
        let (spec, all) = (&field.spec, 0..rows.len());
        if numeric_form {
            let mut ids = Vec::with_capacity(rows.len());
            let emit = numeric(spec, |id| ids.push(id))?;
            generator.end_in_insert::<B, _>(spec, taking, last, emit)?;
            put_numbers(rows, 0, field, all, ids);
        } else {
            let mut ids = Vec::with_capacity(rows.len());
            // A plain spec: no scope (`is_plain`).
            let emit = formatted(spec.into(), &mut ids);
            generator.end_in_insert::<B, _>(spec, taking, last, emit)?;
            put_text(rows, 0, field, all, ids);
        }
        Ok(true)
    }
}
