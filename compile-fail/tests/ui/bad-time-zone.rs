use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(tz = "Mars/Olympus")]
    id: String,
}

fn main() {}
