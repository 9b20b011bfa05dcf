use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewOrder {
    #[distributed_id(check = "crc32")]
    id: String,
    #[distributed_id(key = "letters", date = "", overflow = "letters", check = "luhn")]
    code: String,
    #[distributed_id(key = "long", date = "%Y%m%d", pad = 9, check = "iso7064-mod97-10")]
    number: i64,
}

fn main() {}
