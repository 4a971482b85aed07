// Rejected (non-scalar captures): one closure captures a `Vec<i32>`, which
// is E0103, and a whole `Params` struct (used through a method, so 2021
// captures do not split it), which is made of scalars and raises nothing.
pub struct Params {
    pub scale: i32,
    pub bias: i32,
}

impl Params {
    #[inline(never)]
    fn apply(&self, x: i32) -> i32 {
        x.wrapping_mul(self.scale).wrapping_add(self.bias)
    }
}

pub fn entry(data: &[i32], table: Vec<i32>, params: Params) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let t = table[(b as u32 as usize) % table.len()];
        a.wrapping_add(params.apply(t))
    })
}
