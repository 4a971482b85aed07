// expect: rejected E0105
// Elements `dedup_by` cannot take: a 128-bit integer, and a struct that
// holds an array.
pub fn wide(data: &[u128]) -> Vec<u128> {
    native::dedup_by(data, |a, b| a == b)
}

#[derive(Clone, Copy)]
pub struct Row {
    pub id: u32,
    pub cells: [f32; 4],
}

pub fn rows(data: &[Row]) -> Vec<Row> {
    native::dedup_by(data, |a, b| a.id == b.id)
}
