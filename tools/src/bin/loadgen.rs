//! Load generator: many threads taking IDs from one database, for benchmarks and for the
//! multi-process tests.
//!
//! ```text
//! cargo run --release -p seqgen-tools --bin loadgen -- --url URL [--key NAME] [--threads N]
//!     [--ids N | --seconds S] [--batch N] [--mode batched|gapless] [--insert]
//!     [--rollback P] [--retry-conflicts] [--clock-offset-secs S] [--date PATTERN]
//!     [--scopes N] [--out FILE]
//! ```
//!
//! Prints one JSON line at the end. See `seqgen_tools::loadgen`.

fn main() {
    seqgen_tools::exit_at_once(seqgen_tools::loadgen::status_with(std::env::args().skip(1)))
}
