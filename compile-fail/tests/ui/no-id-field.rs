use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    id: String,
    name: String,
}

fn main() {}
