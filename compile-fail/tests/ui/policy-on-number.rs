use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct Counters {
    #[distributed_id(key = "a", date = "", overflow = "letters")]
    a: i64,
    #[distributed_id(key = "b", date = "", series = ["x", "y"], max = 9)]
    b: i64,
    #[distributed_id(key = "c", date = "%m%d", overflow = "widen")]
    c: i64,
    #[distributed_id(key = "d", date = "", format = "{seq}")]
    d: i64,
}

fn main() {}
