use diesel_seqgen::DistributedId;

struct Company;

#[derive(DistributedId)]
struct NewInvoice {
    company: Company,
    #[distributed_id(scope = "company")]
    number: String,
}

fn main() {}
