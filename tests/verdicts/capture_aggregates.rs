// expect: admitted
// Aggregates captured whole, by value: a tuple, an array indexed at run
// time, `Copy` structs (one `#[repr(C)]`, one rustc reorders), nested ones,
// and a closure whose captures are scalars. Each lies in the environment
// at rustc's offsets, scalar by scalar. The reduction is a `max` capped by
// a captured value (associative and commutative).
#[derive(Clone, Copy)]
pub struct Affine {
    pub scale: f32,
    pub on: bool,
    pub shift: f64,
}

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Window {
    pub lo: u8,
    pub hi: u64,
    pub mid: u16,
}

#[derive(Clone, Copy)]
pub struct Scene {
    pub view: Window,
    pub gains: [f32; 3],
    pub tag: (i8, char),
}

impl Affine {
    fn apply(self, x: f32) -> f32 {
        if self.on {
            (x as f64 * self.scale as f64 + self.shift) as f32
        } else {
            x
        }
    }
}

pub fn table(data: &[u32], weights: [u32; 4]) -> Vec<u32> {
    native::transform(data, move |x| x.wrapping_mul(weights[(x % 4) as usize]))
}

pub fn pair(data: &[i64], bounds: (i64, i64)) -> Vec<i64> {
    native::transform(data, move |x| {
        let b = bounds;
        x.clamp(b.0.min(b.1), b.0.max(b.1))
    })
}

pub fn affine(data: &[f32], a: Affine) -> Vec<f32> {
    native::transform(data, move |x| a.apply(x))
}

pub fn window(data: &[u64], w: Window) -> Vec<u64> {
    native::transform(data, move |x| {
        let w = w;
        x.clamp(w.lo as u64, w.hi.max(w.lo as u64)) + w.mid as u64
    })
}

pub fn scene(data: &[f32], s: Scene) -> Vec<f32> {
    native::transform(data, move |x| {
        let s = s;
        let g = s.gains[(x.to_bits() % 3) as usize];
        x * g + (s.view.mid as f32) + (s.tag.0 as f32) + (s.tag.1 as u32 as f32)
    })
}

pub fn nested_closure(data: &[u32], k: u32, shift: u8) -> u32 {
    let mix = move |v: u32| v.rotate_left(shift as u32) ^ k;
    native::reduce(data, 0, move |a, b| {
        let m = mix;
        a.max(b).min(m(7))
    })
}
