// Each setting whose crate is a feature, in a build that leaves the features off.
use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewInvoice {
    #[distributed_id(prefix = "INV", tz = "Europe/Paris")]
    id: String,
    #[distributed_id(key = "orders", obfuscate = "ORDER_NUMBER_KEY")]
    order: String,
    #[distributed_id(key = "vouchers", check = "luhn")]
    voucher: String,
    // What needs no feature still builds: a fixed offset.
    #[distributed_id(key = "shifts", tz = "+08:00")]
    shift: String,
}

fn main() {}
