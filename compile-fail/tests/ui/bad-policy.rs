use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct Ticket {
    #[distributed_id(key = "a", overflow = "wrap")]
    a: String,
    #[distributed_id(key = "b", overflow = "cycle")]
    b: String,
    #[distributed_id(key = "c", pad = 2, overflow = "cycle", max = 100)]
    c: String,
    #[distributed_id(key = "d", date = "%-d", overflow = "widen")]
    d: String,
    #[distributed_id(key = "e", max = 10)]
    e: String,
}

fn main() {}
