// A type known only by its `IdValue` implementation that holds an i64 ID needs a spec with an
// i64 form: checked at compile time.
use diesel_seqgen::{DistributedId, IdSlot, IdValue};

struct Serial(i64);

impl IdValue for Serial {
    const NUMERIC: bool = true;
    fn id_slot(&mut self) -> IdSlot<'_> {
        self.0.id_slot()
    }
}

#[derive(DistributedId)]
struct Row {
    #[distributed_id(prefix = "S")]
    serial: Serial,
}

#[derive(DistributedId)]
#[distributed_id(crate = "::diesel_seqgen", pad = 4)]
struct Misplaced {
    #[distributed_id]
    id: String,
}

fn main() {}
