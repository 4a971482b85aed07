// expect: admitted
// `Option`, `Result` and `Ordering` inside callbacks, as optimised MIR
// gives them: `Option::Some` aggregates, downcasts to read a variant's
// field, discriminant switches, `Cmp` (an `Ordering` as -1, 0 or 1).
use core::cmp::Ordering;

fn halve(x: i32) -> Option<i32> {
    let h = x.checked_div(2)?;
    if h > 100 { None } else { Some(h) }
}

pub fn checked(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| x.checked_add(1 << 30).unwrap_or(i32::MAX))
}

pub fn if_let(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| if let Some(h) = halve(x) { h } else { -1 })
}

pub fn try_from(data: &[i32]) -> Vec<u8> {
    native::transform(data, |x| u8::try_from(x).unwrap_or(255))
}

pub fn ordering(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| if a.cmp(&b) == Ordering::Less { b } else { a })
}

pub fn partial(data: &[f32]) -> Vec<i32> {
    native::transform(data, |x| match x.partial_cmp(&0.5) {
        Some(Ordering::Less) => -1,
        Some(Ordering::Equal) => 0,
        Some(Ordering::Greater) => 1,
        None => 2,
    })
}

pub fn total(data: &[f64]) -> Vec<i32> {
    native::transform(data, |x| x.total_cmp(&1.0) as i32)
}
