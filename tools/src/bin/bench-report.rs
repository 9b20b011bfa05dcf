//! The README's performance figures in one run, as ratios to baselines measured in the same
//! run (see `seqgen_tools::bench_report`).
//!
//! ```text
//! cargo run --release -p seqgen-tools --bin bench-report --all-features -- \
//!     --url postgres://postgres@127.0.0.1/test --url mysql://root@127.0.0.1/test
//! ```

fn main() -> std::process::ExitCode {
    seqgen_tools::bench_report::main_with(std::env::args().skip(1))
}
