// expect: admitted
// `merge_by` of records sorted by a field, and of tuples by both fields:
// the comparator reads fields at rustc's offsets; the merge moves whole
// elements.
#[derive(Clone, Copy)]
pub struct Order {
    pub price: f64,
    pub id: u32,
    pub side: u8,
}

/// Two books of orders, each by price.
pub fn book(a: &[Order], b: &[Order]) -> Vec<Order> {
    native::merge_by(a, b, |x, y| x.price.total_cmp(&y.price))
}

/// Pairs by key, then by weight.
pub fn pairs(a: &[(u16, f32)], b: &[(u16, f32)]) -> Vec<(u16, f32)> {
    native::merge_by(a, b, |x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)))
}
