//! seqgen's tools: the load generator (`loadgen`), the report behind `BENCHMARKS.md`
//! (`bench-report`), the simulation of many instances on one key (`simulate`) and the faults
//! a kill does not make (`nemesis`, with the histories of `history`), as a library
//! their binaries and the fault tests of `tests/` share.
// One exception, `exit_at_once`.
#![deny(unsafe_code)]

pub mod bench_report;
pub mod history;
pub mod loadgen;
pub mod nemesis;
pub mod patroni;
pub mod programs;
pub mod simulate;

/// Ends the process with `status` at once, without C's exit handlers, after flushing stdout
/// and stderr: how loadgen ends. r2d2 opens connections on threads of its own (keeping
/// `min_idle`, replacing each one a cut session broke, finishing one a `get` gave up on), and
/// those may still be connecting when `main` returns; the exit handlers then free OpenSSL's
/// state under libpq's TLS handshake, and the process dies of a SIGSEGV in r2d2's worker after
/// its work was done and reported (one `connections_cut` run in 20 to 40 under load; Diesel's
/// issue 3441 is the same crash). Nothing of seqgen's is left to those handlers: every file
/// loadgen writes is closed before its report is printed.
#[allow(unsafe_code)]
pub fn exit_at_once(status: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process and returns to nothing; the output is flushed above.
    unsafe { libc::_exit(status.into()) }
}
