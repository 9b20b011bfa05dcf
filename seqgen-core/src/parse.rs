//! Reading an ID back into its parts, for a given spec.

use chrono::format::{parse, Parsed, StrftimeItems};

use crate::policy::{self, Overflow};
use crate::spec::Spec;
use crate::template::Part;

/// The parts of an ID, as [`Spec::parse`] reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdParts {
    /// The prefix (empty without one).
    pub prefix: String,
    /// The period: the date part as written (empty without one).
    pub period: String,
    /// The series code, for specs with series.
    pub series: Option<String>,
    /// The scope, for specs whose template prints it (`{scope}`).
    pub scope: Option<String>,
    /// The sequence number the ID shows (within its series or cycle).
    pub seq: u64,
}

/// An ID the spec could not have produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIdError {
    id: String,
    reason: String,
}

impl std::fmt::Display for ParseIdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} is not an ID of this spec: {}",
            self.id, self.reason
        )
    }
}

impl std::error::Error for ParseIdError {}

impl Spec {
    /// Reads `id` back into its parts, or says why this spec could not have produced it.
    ///
    /// ```
    /// let spec = diesel_seqgen_core::Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).build()?;
    /// let parts = spec.parse("ORD25070001")?;
    /// assert_eq!((parts.period.as_str(), parts.seq), ("2507", 1));
    /// assert!(spec.parse("ORD2507001").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse(&self, id: &str) -> Result<IdParts, ParseIdError> {
        let fail = |reason: String| ParseIdError {
            id: id.to_owned(),
            reason,
        };
        let template = self.template();
        // At most one part has no fixed width (a widened counter, or a date such as `%-d`):
        // the parts before it are read from the left, the parts after it from the right.
        let width = |part: &Part| -> Option<usize> {
            match part {
                Part::Literal(text) => Some(text.len()),
                Part::Prefix => Some(self.prefix().len()),
                Part::Series => self
                    .series()
                    .and_then(|s| s.codes().first())
                    .map(String::len),
                Part::Date if self.date().is_empty() => Some(0),
                Part::Date => self.date_shape().fixed_width,
                Part::Seq if self.overflow() == Overflow::Widen => None,
                Part::Seq => Some(self.pad() as usize),
                Part::Check => self.check().map(|c| c.width() as usize),
                // Whatever the fixed-width parts leave (`spec/printed_scope.rs`).
                Part::Scope => None,
            }
        };
        let split = template
            .iter()
            .position(|p| width(p).is_none())
            .unwrap_or(template.len());
        let mut pieces: Vec<&str> = vec![""; template.len()];
        let mut start = 0;
        for (i, part) in template[..split].iter().enumerate() {
            // Every part before `split` has a width: `split` is the first that has none.
            let end = start + width(part).expect("fixed width");
            pieces[i] = id.get(start..end).ok_or_else(|| fail("too short".into()))?;
            start = end;
        }
        let mut end = id.len();
        for (i, part) in template.iter().enumerate().skip(split).rev() {
            if i == split {
                pieces[i] = id
                    .get(start..end)
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| fail("too short".into()))?;
                end = start;
                break;
            }
            // A template has at most one part without a width (`{seq}` with widen): the
            // parts after `split` have one.
            let begin = end
                .checked_sub(width(part).expect("fixed width"))
                .filter(|&b| b >= start)
                .ok_or_else(|| fail("too short".into()))?;
            pieces[i] = id
                .get(begin..end)
                .ok_or_else(|| fail("not on a character boundary".into()))?;
            end = begin;
        }
        if start < end {
            return Err(fail(format!("{} characters too many", end - start)));
        }

        let mut parts = IdParts {
            prefix: String::new(),
            period: String::new(),
            series: None,
            scope: None,
            seq: 0,
        };
        for (part, &piece) in template.iter().zip(&pieces) {
            match part {
                Part::Literal(text) if piece != text => {
                    return Err(fail(format!("expected {text:?}, found {piece:?}")))
                }
                Part::Literal(_) => {}
                Part::Prefix if piece != self.prefix() => {
                    return Err(fail(format!(
                        "expected the prefix {:?}, found {piece:?}",
                        self.prefix()
                    )))
                }
                Part::Prefix => parts.prefix = piece.to_owned(),
                Part::Series => {
                    let codes = self.series().map(|s| s.codes()).unwrap_or_default();
                    if !codes.iter().any(|c| c == piece) {
                        return Err(fail(format!(
                            "{piece:?} is not one of the series {codes:?}"
                        )));
                    }
                    parts.series = Some(piece.to_owned());
                }
                Part::Date => {
                    if !self.date().is_empty() {
                        let mut parsed = Parsed::new();
                        parse(&mut parsed, piece, StrftimeItems::new(self.date())).map_err(
                            |e| fail(format!("{piece:?} is not a date `{}`: {e}", self.date())),
                        )?;
                    }
                    parts.period = piece.to_owned();
                }
                Part::Seq => {
                    let seq =
                        policy::read_seq(piece, self.pad(), self.overflow()).ok_or_else(|| {
                            fail(format!("{piece:?} is not a counter of pad {}", self.pad()))
                        })?;
                    let limit = match (self.series(), self.overflow()) {
                        (Some(series), _) => series.max(),
                        (None, Overflow::Cycle { max }) => max,
                        _ => self.stepped(self.capacity()),
                    };
                    if seq > limit {
                        return Err(fail(format!("counter {seq} is past {limit}")));
                    }
                    if self.unstepped(seq).is_none() {
                        return Err(fail(format!(
                            "{seq} is not on the step: numbers go {} by {}",
                            self.stepped(1),
                            self.step()
                        )));
                    }
                    parts.seq = seq;
                }
                Part::Check => {}
                Part::Scope => parts.scope = Some(piece.to_owned()),
            }
        }
        if let Some(check) = self.check() {
            // The check of everything else, as `format` computed it.
            let at = template.iter().position(|p| *p == Part::Check);
            let (rest, given): (String, &str) = match at {
                Some(at) => (
                    pieces
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != at)
                        .map(|(_, p)| *p)
                        .collect(),
                    pieces[at],
                ),
                None => (id.to_owned(), ""),
            };
            let expected = check.of(&rest);
            if given != expected {
                return Err(fail(format!(
                    "its check {given:?} should be {expected:?} ({}): a character is wrong or two are swapped",
                    check.name()
                )));
            }
        }
        Ok(parts)
    }

    /// Whether `id` could be an ID of this spec and is intact: [`Spec::parse`] succeeds, which
    /// with a [`check`](crate::SpecBuilder::check) scheme includes its check. No database is
    /// asked: a number past the counter still passes.
    ///
    /// ```
    /// # #[cfg(feature = "check-characters")] {
    /// use diesel_seqgen_core::{Check, Spec};
    ///
    /// let invoices = Spec::builder("invoices").prefix("INV").date("%Y").pad(6).check(Check::Luhn).build()?;
    /// let id = invoices.format("2026", 41);
    /// assert!(invoices.verify(&id));
    /// assert!(!invoices.verify(&id.replace("41", "14")));
    /// # }
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn verify(&self, id: &str) -> bool {
        self.parse(id).is_ok()
    }

    /// Reads the `i64` form of an ID (as [`Spec::numeric`] made it) back into its parts: the
    /// number's digits, with the leading zeros an `i64` drops put back.
    ///
    /// ```
    /// let spec = diesel_seqgen_core::Spec::builder("tickets").date("").pad(6).build()?;
    /// assert_eq!(spec.parse_number(42)?.seq, 42);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse_number(&self, id: i64) -> Result<IdParts, ParseIdError> {
        let text = id.to_string();
        let check = self.check().map_or(0, |c| c.width() as usize);
        let width = match self.date_shape().numeric_width {
            Some(date) if self.is_numeric() && id > 0 => {
                usize::from(date) + self.pad() as usize + check
            }
            _ => {
                return Err(ParseIdError {
                    id: text,
                    reason: "this spec has no `i64` form".to_owned(),
                })
            }
        };
        self.parse(&format!("{text:0>width$}"))
    }

    /// The counter (the number in `db_key`) an ID with these parts was made from: the
    /// sequence number, after the series before it; `None` with `cycle`, whose IDs repeat.
    pub fn counter_of(&self, parts: &IdParts) -> Option<u64> {
        if let Overflow::Cycle { .. } = self.overflow() {
            return None;
        }
        let shown = match (self.series(), &parts.series) {
            (Some(series), Some(code)) => {
                let index = series.codes().iter().position(|c| c == code)? as u64;
                index.checked_mul(series.max())?.checked_add(parts.seq)?
            }
            (None, None) => parts.seq,
            _ => return None,
        };
        // Obfuscation and a step are never together (`spec/step.rs`).
        self.revealed(&parts.period, self.unstepped(shown)?)
    }
}
