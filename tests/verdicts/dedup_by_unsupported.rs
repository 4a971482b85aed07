// expect: rejected E0105
// Elements `dedup_by` cannot take: a 128-bit integer, a struct that
// holds an array, and one that holds a reference (its lifetime parameter
// is no obstacle to saying so).
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

#[derive(Clone, Copy)]
pub struct Named<'a> {
    pub id: u32,
    pub name: &'a str,
}

pub fn named<'a>(data: &[Named<'a>]) -> Vec<Named<'a>> {
    native::dedup_by(data, |a, b| a.id == b.id)
}
