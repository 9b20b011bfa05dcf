//! Which database a connection reaches when the connection cannot remember it (a plain
//! connection, or a pooled one passed as `&mut *pooled`), guessed without a query: the
//! database last found at the connection's address, or the only one connections of its type
//! have reached. A guess is only ever acted on by an insert that checks it itself
//! (`backend/asserted.rs`): the insert carries the guessed database's marker and inserts
//! nothing unless the session was marked with it after its database was identified
//! (`Backend::mark_session`). A wrong guess costs a statement that inserts nothing, the
//! identifying query the guess saved, and the guessed numbers (holes); never a duplicate.
//!
//! A marker names one default generator of this process (a random per-process part and the
//! generator's number), so only a session this process identified can carry it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::backend::asserted::Mark;
use crate::backend::row_values::is_not_rewritten;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::generator::Generator;
use crate::model::{gapless_field, DistributedId};

/// A database a connection may reach: its default generator and that generator's mark.
#[derive(Clone)]
pub(crate) struct Guess {
    pub(crate) generator: Generator,
    pub(crate) mark: Mark,
    /// Where the guess came from, to count a miss there, and the misses counted then.
    from: Place,
    misses: u8,
}

/// Where a guess comes from: a connection, or a type of connection.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Place {
    /// A connection's type (by name: the connections of bb8's pool are not `'static`) and
    /// address.
    At(&'static str, usize),
    /// Any connection of a type.
    Any(&'static str),
}

/// Misses after which a place is no longer guessed from. An address gives up after a few in a
/// row: its sessions keep changing (a new connection per call, a pooler that moves sessions,
/// the inserts of a transaction that always rolls back), and the query is cheaper taken at
/// once. A type counts a hit against a miss, since each new connection of a pool misses once
/// before its session is marked.
impl Place {
    fn gives_up_after(self) -> u8 {
        match self {
            Place::At(..) => 3,
            Place::Any(_) => 32,
        }
    }
}

/// How many connection addresses are kept; past it they are forgotten (and guessed again from
/// their type).
const MAX_PLACES: usize = 4096;

#[derive(Default)]
struct Known {
    places: HashMap<Place, Entry>,
    /// The mark of each default generator that marked a session, by its `uid`: one per
    /// database this process reached.
    marks: HashMap<u64, Mark>,
}

struct Entry {
    /// `None` for a type whose connections reached more than one database.
    guess: Option<(Generator, Mark)>,
    misses: u8,
}

fn known() -> std::sync::MutexGuard<'static, Known> {
    static KNOWN: OnceLock<Mutex<Known>> = OnceLock::new();
    KNOWN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The place of `conn`: its type and address.
pub(crate) fn place_of<C>(conn: &C) -> Place {
    Place::At(std::any::type_name::<C>(), conn as *const C as usize)
}

/// Whether an insert of `rows` on backend `B` is one to serve on a guess: the default
/// generator's (not one of the caller's), batched, where telling the database apart costs a
/// round trip.
pub(crate) fn worth_guessing<B: Backend, T: DistributedId>(
    rows: &[T],
    own_generator: bool,
) -> bool {
    !own_generator
        && B::IDENTIFY_IS_A_ROUND_TRIP
        && gapless_field::<T>().is_none()
        && !rows.is_empty()
}

/// What an insert on a guess came to.
pub(crate) enum Outcome {
    /// The checking insert inserted this many rows: the guess was right.
    Inserted(usize),
    /// Tell the database apart with a query, then insert as usual; `remark`: the session is
    /// not marked as reaching the guessed database (a wrong guess, or a new session).
    Identify { remark: bool },
}

/// Judges `attempt` (the fill from the guessed generator, then the checking insert), counting
/// a hit or a miss. Any other error is returned after `unfill` took the guessed numbers back:
/// they are numbers of a database the guess has not shown this one to be, and a retry with
/// them could insert them here.
pub(crate) fn judge(
    guess: &Guess,
    attempt: Result<usize>,
    unfill: impl FnOnce(),
) -> Result<Outcome> {
    match attempt {
        Ok(inserted) if inserted > 0 => {
            hit(guess);
            Ok(Outcome::Inserted(inserted))
        }
        // Inserted nothing: the session does not carry the guessed database's mark.
        Ok(_) | Err(Error::DifferentDatabase) => {
            missed(guess);
            Ok(Outcome::Identify { remark: true })
        }
        // Not an insert that checks itself: the guess is checked with the query instead.
        Err(Error::Database(ref e)) if is_not_rewritten(e) => {
            Ok(Outcome::Identify { remark: false })
        }
        Err(e) => {
            unfill();
            Err(e)
        }
    }
}

/// The database `conn` probably reaches, if any place has a guess worth acting on.
pub(crate) fn guess<C>(conn: &C) -> Option<Guess> {
    let known = known();
    let usable = |place: Place| {
        let entry = known.places.get(&place)?;
        let (generator, mark) = entry.guess.as_ref()?;
        (entry.misses < place.gives_up_after()).then(|| Guess {
            generator: generator.clone(),
            mark: mark.clone(),
            from: place,
            misses: entry.misses,
        })
    };
    let at = place_of(conn);
    if known.places.contains_key(&at) {
        // A known address that gave up is not guessed from its type either.
        return usable(at);
    }
    usable(Place::Any(std::any::type_name::<C>()))
}

/// The guess was right: its place is trusted again.
fn hit(guess: &Guess) {
    if guess.misses == 0 {
        return; // nothing to forgive: the common case takes no lock
    }
    if let Some(entry) = known().places.get_mut(&guess.from) {
        entry.misses = match guess.from {
            Place::At(..) => 0,
            Place::Any(_) => entry.misses.saturating_sub(1),
        };
    }
}

/// The guess was wrong (or the session lost its marker).
fn missed(guess: &Guess) {
    if let Some(entry) = known().places.get_mut(&guess.from) {
        entry.misses = entry.misses.saturating_add(1);
    }
}

/// The mark of `generator`'s database, unless no session of it was marked yet, and whether the
/// connection at `at` is known to carry it already (its session was marked, unless it is
/// another session at the same address, which the next insert finds out).
pub(crate) fn mark_at(at: Place, generator: &Generator) -> (Option<Mark>, bool) {
    let known = known();
    if let Some(Entry {
        guess: Some((guessed, mark)),
        ..
    }) = known.places.get(&at)
    {
        if guessed.is(generator) {
            return (Some(mark.clone()), true);
        }
    }
    (known.marks.get(&generator.uid()).cloned(), false)
}

/// Notes that the session of the connection at `at` was marked as reaching `generator`'s
/// database with `mark`.
pub(crate) fn marked(at: Place, generator: &Generator, mark: Mark) {
    let mut known = known();
    known.marks.insert(generator.uid(), mark.clone());
    if known.places.len() >= MAX_PLACES {
        known
            .places
            .retain(|place, _| matches!(place, Place::Any(_)));
    }
    let misses = match known.places.get(&at) {
        // Another session at an address that kept missing: it keeps its count.
        Some(entry) => entry.misses,
        None => 0,
    };
    let guess = Some((generator.clone(), mark));
    known.places.insert(
        at,
        Entry {
            guess: guess.clone(),
            misses,
        },
    );
    let any = match at {
        Place::At(type_name, _) | Place::Any(type_name) => Place::Any(type_name),
    };
    let any = known
        .places
        .entry(any)
        .or_insert(Entry { guess, misses: 0 });
    if any.guess.as_ref().is_some_and(|(g, _)| !g.is(generator)) {
        any.guess = None; // connections of this type reach several databases
    }
}

/// A marker no other generator, and no other process, has.
pub(crate) fn marker_of(generator: &Generator) -> Arc<str> {
    static PROCESS: OnceLock<i64> = OnceLock::new();
    let process = PROCESS.get_or_init(crate::reserve::retry::random_token);
    format!("{process:x}.{}", generator.uid()).into()
}
