use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(date = "%Y%Q%d")]
    id: String,
    #[distributed_id(key = "stamps", date = "%H%M%S%.3f")]
    stamp: String,
}

fn main() {}
