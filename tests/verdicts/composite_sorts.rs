// expect: admitted
// Records sorted by a key: `sort_by` and `sort_by_key` over tuples and
// structs, the comparator or key function taking references to values in
// rustc's layout.
#[derive(Clone, Copy)]
pub struct Order {
    pub price: f32,
    pub id: u32,
    pub side: i8,
}

pub fn by_price(data: &[Order]) -> Vec<Order> {
    native::sort_by(data, |a, b| a.price.total_cmp(&b.price))
}

pub fn by_id(data: &[Order]) -> Vec<Order> {
    native::sort_by_key(data, |o| o.id)
}

pub fn by_side_then_price(data: &[Order]) -> Vec<Order> {
    native::sort_by(data, |a, b| a.side.cmp(&b.side).then(b.price.total_cmp(&a.price)))
}

pub fn pairs(data: &[(i32, u64)]) -> Vec<(i32, u64)> {
    native::sort_by(data, |a, b| a.0.cmp(&b.0))
}

pub fn pairs_by_key(data: &[(u16, (u8, u64))], k: u8) -> Vec<(u16, (u8, u64))> {
    native::sort_by_key(data, move |p| (p.1 .0 ^ k, p.0))
}

/// Wide records (32 bytes): the radix sort ranks (key, index) pairs and
/// gathers the records once.
#[derive(Clone, Copy)]
pub struct Trade {
    pub at: u64,
    pub price: f64,
    pub qty: i32,
    pub venue: u16,
    pub side: i8,
    pub book: u64,
}

pub fn trades_by_price_then_latest(data: &[Trade]) -> Vec<Trade> {
    native::sort_by(data, |a, b| a.price.total_cmp(&b.price).then(b.at.cmp(&a.at)))
}

pub fn trades_by_qty(data: &[Trade]) -> Vec<Trade> {
    native::sort_by_key(data, |t| t.qty)
}
