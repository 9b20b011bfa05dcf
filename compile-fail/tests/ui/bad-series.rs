use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct Ticket {
    #[distributed_id(key = "a", series = ["aa", "b", "aa"], max = 9)]
    a: String,
    #[distributed_id(key = "b", series = ["x", "y"])]
    b: String,
    #[distributed_id(key = "c", series = "x,y", max = 9)]
    c: String,
    #[distributed_id(key = "d", series = ["x", "y"], max = 9, overflow = "widen")]
    d: String,
}

fn main() {}
