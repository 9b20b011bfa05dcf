use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(date = "%Y%m%d%H", pad = 9)]
    id: i64,
    #[distributed_id(key = "named_months", date = "%b", pad = 6)]
    month_id: Option<i64>,
}

fn main() {}
