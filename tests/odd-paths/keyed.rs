// Imported from folders whose names break naive MIR parsing (`}`, `{@`, `"`,
// a newline): rustc prints the path verbatim inside closure and impl names.
// See frontend/tests/odd_paths.rs.

pub struct Key(i32);

impl Key {
    pub fn get(&self) -> i32 {
        self.0
    }
}

#[inline(never)]
fn mix(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

pub fn keyed(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| mix(a, b) ^ k)
}
