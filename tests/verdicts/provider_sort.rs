// expect: admitted
// Comparators: `<` on i64, a key of f32, and an fn item on u8.
pub fn ascending(data: &[i64]) -> Vec<i64> {
    native::sort_by(data, |a, b| a < b)
}

pub fn by_bucket(data: &[f32], width: f32) -> Vec<f32> {
    native::sort_by(data, move |a, b| ((a / width) as i32) < ((b / width) as i32))
}

fn descending(a: u8, b: u8) -> bool {
    a > b
}

pub fn reversed(data: &[u8]) -> Vec<u8> {
    native::sort_by(data, descending)
}
