// expect: W0201 irreflexive
// Records sorted with `<=` on their key: equal keys say `Less` both ways,
// the silent corruption of a merge sort, over a struct as over a scalar.
#[derive(Clone, Copy)]
pub struct Order {
    pub price: f32,
    pub id: u32,
}

pub fn entry(data: &[Order]) -> Vec<Order> {
    native::sort_by(data, |a, b| if a.id <= b.id { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater })
}
