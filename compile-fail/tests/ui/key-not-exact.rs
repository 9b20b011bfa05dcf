use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct Ticket {
    #[distributed_id(key = "pk ")]
    a: String,
    #[distributed_id(key = " ")]
    b: String,
    #[distributed_id(key = "tab\there")]
    c: String,
}

fn main() {}
