//! The nemesis: partitions, lost packets, slow links, paused processes, moved clocks, killed
//! apps and crashed servers on a seeded schedule, under loadgen processes that write histories,
//! checked afterwards. Needs root.
//!
//! ```text
//! cargo run --release -p seqgen-tools --features postgres,mysql --bin nemesis -- \
//!     --setup postgres|mariadb [--seed N] [--duration S] [--apps N] [--dir DIR]
//! ```
//!
//! See `seqgen_tools::nemesis`.

fn main() -> std::process::ExitCode {
    seqgen_tools::nemesis::main_with(std::env::args().skip(1).collect())
}
