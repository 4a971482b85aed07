// expect: admitted
// The crate's own enums inside a callback: fieldless with explicit
// discriminants (cast with `as`), and with payloads built and matched.
#[derive(Clone, Copy)]
enum Class {
    Low = -2,
    Mid = 5,
    High,
}

#[derive(Clone, Copy)]
enum Shape {
    Circle(f32),
    Rect { w: f32, h: f32 },
    Empty,
}

fn classify(x: i32) -> Class {
    if x < 0 { Class::Low } else if x < 100 { Class::Mid } else { Class::High }
}

fn area(s: Shape) -> f32 {
    match s {
        Shape::Circle(r) => 3.0 * r * r,
        Shape::Rect { w, h } => w * h,
        Shape::Empty => 0.0,
    }
}

pub fn classes(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| classify(x) as i32)
}

pub fn areas(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x| {
        let s = if x < 0.0 { Shape::Empty } else if x < 1.0 { Shape::Circle(x) } else { Shape::Rect { w: x, h: 2.0 } };
        area(s)
    })
}
