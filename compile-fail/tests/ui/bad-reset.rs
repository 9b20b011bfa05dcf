use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct Order {
    #[distributed_id(prefix = "SO", date = "%Y%m", reset = "day")]
    no: String,
    #[distributed_id(key = "docs", date = "%Y%m%d", reset = "yearly")]
    doc_no: String,
    #[distributed_id(key = "invoices", date = "%Y%m%d", reset = "fiscal-year")]
    invoice_no: String,
}

fn main() {}
