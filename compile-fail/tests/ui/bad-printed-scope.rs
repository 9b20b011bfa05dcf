use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewInvoice {
    #[distributed_id(format = "{scope}-{date}-{seq}", date = "%Y", pad = 4)]
    no: String,
    #[distributed_id(key = "orders", format = "{scope}{seq}", date = "", scope = "company", overflow = "widen")]
    order_no: String,
    company: String,
}

fn main() {}
