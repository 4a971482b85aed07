// expect: rejected E0105
// Tuples and structs that are no elements: a field the providers do not
// take (`bool`, `char`, `usize`), a field that is no scalar, tuple or
// struct (a reference, an array, an enum).
#[derive(Clone, Copy)]
pub struct Flagged {
    pub on: bool,
    pub v: u32,
}

#[derive(Clone, Copy)]
pub struct Row {
    pub cells: [f32; 4],
}

#[derive(Clone, Copy)]
pub enum Level {
    Low,
    High,
}

#[derive(Clone, Copy)]
pub struct Tagged {
    pub level: Level,
    pub v: u32,
}

pub fn flags(data: &[Flagged]) -> Flagged {
    native::reduce(data, Flagged { on: false, v: 0 }, |a, b| Flagged { on: a.on | b.on, v: a.v | b.v })
}

pub fn letters(data: &[(char, u32)]) -> Vec<u32> {
    native::transform(data, |(c, v)| c as u32 ^ v)
}

pub fn sizes(data: &[u32]) -> Vec<(usize, u32)> {
    native::transform(data, |v| (v as usize, v))
}

pub fn rows(data: &[Row]) -> Vec<f32> {
    native::transform(data, |r| r.cells[0])
}

pub fn levels(data: &[Tagged]) -> Vec<u32> {
    native::transform(data, |t| t.v)
}

pub fn borrowed<'a>(data: &[(&'a u32, u32)]) -> Vec<u32> {
    native::transform(data, |p| *p.0 + p.1)
}
