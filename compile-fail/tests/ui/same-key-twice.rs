use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewOrder {
    #[distributed_id(prefix = "ORD")]
    order_no: String,
    #[distributed_id(prefix = "INV")]
    invoice_no: String,
}

fn main() {}
