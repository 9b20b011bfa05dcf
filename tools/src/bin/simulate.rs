//! N app instances on one key's row, with blocks sized as a generator sizes them (see
//! `seqgen_tools::simulate`): reservations per second, block sizes and holes, from 10 to
//! 10,000 instances.
//!
//! ```text
//! cargo run --release -p seqgen-tools --bin simulate -- --rate 10000 --reservation-ms 0.5
//! ```

use clap::Parser;
use seqgen_tools::simulate::{simulate, Setup};

/// N app instances on one key's row.
#[derive(Parser)]
struct Args {
    /// IDs each instance takes per second
    #[arg(long, default_value_t = 10_000.0)]
    rate: f64,
    /// How long one reservation holds the key's row, in milliseconds (measured: `bench-report
    /// --report scaling` prints it)
    #[arg(long, default_value_t = 0.5)]
    reservation_ms: f64,
    /// Simulated seconds per point (the second half is measured)
    #[arg(long, default_value_t = 120.0)]
    seconds: f64,
}

fn main() {
    let args = Args::parse();
    println!(
        "| instances | IDs/s in all | reservations/s on the row | mean block | holes if all were killed | mean wait for a block, ms |"
    );
    println!("|---|---|---|---|---|---|");
    for instances in [10, 30, 100, 300, 1_000, 3_000, 10_000] {
        let o = simulate(Setup {
            instances,
            rate: args.rate,
            reservation: args.reservation_ms / 1e3,
            seconds: args.seconds,
        });
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} |",
            o.instances,
            o.ids_per_second,
            o.reservations_per_second,
            o.mean_block,
            o.holes,
            o.mean_wait_ms
        );
    }
}
