use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(pad = 0)]
    id: String,
    #[distributed_id(key = "wide", pad = 19)]
    code: String,
}

fn main() {}
