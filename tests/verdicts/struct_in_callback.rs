// expect: admitted
// A `Copy` struct of scalars built, passed to a helper and read inside a
// callback (a tuple struct and a record struct, one generic).
#[derive(Clone, Copy)]
struct Point<T> {
    x: T,
    y: T,
}

#[derive(Clone, Copy)]
struct Scale(f32, f32);

fn dot(p: Point<f32>, s: Scale) -> f32 {
    p.x * s.0 + p.y * s.1
}

pub fn project(data: &[f32]) -> Vec<f32> {
    native::transform(data, |v| dot(Point { x: v, y: 1.0 - v }, Scale(2.0, 0.5)))
}
