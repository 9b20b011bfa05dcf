use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct Invoice {
    #[distributed_id(key = "a", format = "INV-{sequence}")]
    a: String,
    #[distributed_id(key = "b", format = "INV-{seq}")]
    b: String,
    #[distributed_id(key = "c", format = "{date}-{seq", date = "%Y")]
    c: String,
    #[distributed_id(key = "d", prefix = "P", date = "", format = "{seq}")]
    d: String,
}

fn main() {}
