// expect: admitted
// Tuples and structs as elements of `select`: the predicate reads the
// element's fields at rustc's offsets (the thunk takes the element by
// pointer), and the kept elements move whole, padding and all, in order.
#[derive(Clone, Copy)]
pub struct Particle {
    pub at: (f32, f32, f32),
    pub id: u32,
    pub alive: u8,
}

/// The pairs whose value is below the threshold and whose index is even.
pub fn even_below(data: &[(f32, u32)], t: f32) -> Vec<(f32, u32)> {
    native::select(data, move |p| p.0 < t && p.1 % 2 == 0)
}

/// The live particles inside a sphere around the origin.
pub fn inside(data: &[Particle], r: f32) -> Vec<Particle> {
    native::select(data, move |p| {
        let (x, y, z) = p.at;
        p.alive != 0 && x * x + y * y + z * z < r * r
    })
}

/// A triple of narrow fields, rustc's order not the source's.
pub fn tagged(data: &[(u8, u64, i16)], tag: u8) -> Vec<(u8, u64, i16)> {
    native::select(data, move |e| e.0 == tag && e.2 >= 0)
}
