// expect: admitted
// Which sort each comparator or key asks for (`frontend::order`): a radix
// sort where the callback is proved to be a lexicographic order of the
// element's fields (each ascending or descending, integers as themselves,
// floats by `total_cmp`, of themselves or negated, or by their bits), the
// merge sort otherwise (an integer's negation wraps at MIN), with
// the reason. Every callback here is admitted; only the sort differs.
use std::cmp::Ordering;

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Event {
    pub id: u32,
    pub weight: f32,
    pub time: i64,
}

// Radix: one field, each direction, each order.
pub fn descending(d: &[u64]) -> Vec<u64> {
    native::sort_by(d, |a: &u64, b: &u64| b.cmp(a))
}

pub fn floats_total(d: &[f32]) -> Vec<f32> {
    native::sort_by(d, |a: &f32, b: &f32| a.total_cmp(b))
}

pub fn reversed(d: &[i16]) -> Vec<i16> {
    native::sort_by(d, |a: &i16, b: &i16| a.cmp(b).reverse())
}

pub fn widened(d: &[Event]) -> Vec<Event> {
    native::sort_by(d, |a: &Event, b: &Event| (a.id as u64).cmp(&(b.id as u64)))
}

pub fn float_bits(d: &[f32]) -> Vec<f32> {
    native::sort_by_key(d, |v: &f32| v.to_bits())
}

pub fn negated(d: &[f32]) -> Vec<f32> {
    native::sort_by(d, |a: &f32, b: &f32| (-a).total_cmp(&-b))
}

pub fn natural(d: &[u32]) -> Vec<u32> {
    native::sort(d)
}

// Radix: lexicographic orders, however written.
pub fn then(d: &[Event]) -> Vec<Event> {
    native::sort_by(d, |a: &Event, b: &Event| a.id.cmp(&b.id).then(b.time.cmp(&a.time)))
}

pub fn tuple_cmp(d: &[Event]) -> Vec<Event> {
    native::sort_by(d, |a: &Event, b: &Event| (a.time, a.id).cmp(&(b.time, b.id)))
}

pub fn matched(d: &[Event]) -> Vec<Event> {
    native::sort_by(d, |a: &Event, b: &Event| match a.time.cmp(&b.time) {
        Ordering::Equal => a.weight.total_cmp(&b.weight),
        o => o,
    })
}

pub fn by_hand(d: &[(u32, i16)]) -> Vec<(u32, i16)> {
    native::sort_by(d, |a: &(u32, i16), b: &(u32, i16)| {
        if a.1 < b.1 {
            Ordering::Greater
        } else if a.1 > b.1 {
            Ordering::Less
        } else {
            a.0.cmp(&b.0)
        }
    })
}

pub fn whole_tuple(d: &[(u32, i16)]) -> Vec<(u32, i16)> {
    native::sort_by(d, |a: &(u32, i16), b: &(u32, i16)| a.cmp(b))
}

pub fn key_field(d: &[Event]) -> Vec<Event> {
    native::sort_by_key(d, |e: &Event| e.id)
}

pub fn key_tuple(d: &[(u32, i16)]) -> Vec<(u32, i16)> {
    native::sort_by_key(d, |v: &(u32, i16)| (v.1 as i64, v.0))
}

pub fn negated_field(d: &[Event]) -> Vec<Event> {
    native::sort_by(d, |a: &Event, b: &Event| (-a.weight).total_cmp(&-b.weight).then(a.id.cmp(&b.id)))
}

pub fn repeated(d: &[(u32, i16)]) -> Vec<(u32, i16)> {
    native::sort_by(d, |a: &(u32, i16), b: &(u32, i16)| a.0.cmp(&b.0).then(a.0.cmp(&b.0)))
}

// Merge sort, each for its reason.
pub fn partial(d: &[f32]) -> Vec<f32> {
    native::sort_by(d, |a: &f32, b: &f32| a.partial_cmp(b).unwrap_or(Ordering::Equal))
}

pub fn never_equal(d: &[u64]) -> Vec<u64> {
    native::sort_by(d, |a: &u64, b: &u64| if a < b { Ordering::Less } else { Ordering::Greater })
}

pub fn sum_of_fields(d: &[(u32, i16)]) -> Vec<(u32, i16)> {
    native::sort_by(d, |a: &(u32, i16), b: &(u32, i16)| {
        (a.0 as u64 + a.1 as u64).cmp(&(b.0 as u64 + b.1 as u64))
    })
}

pub fn sign_changed(d: &[(u32, i16)]) -> Vec<(u32, i16)> {
    native::sort_by(d, |a: &(u32, i16), b: &(u32, i16)| (a.1 as u16).cmp(&(b.1 as u16)))
}

pub fn masked(d: &[u64], mask: u64) -> Vec<u64> {
    native::sort_by_key(d, move |v: &u64| *v & mask)
}

pub fn shifted(d: &[i32]) -> Vec<i32> {
    native::sort_by_key(d, |x: &i32| x >> 4)
}

pub fn negated_int(d: &[i32]) -> Vec<i32> {
    native::sort_by(d, |a: &i32, b: &i32| a.wrapping_neg().cmp(&b.wrapping_neg()))
}

pub fn two_fields_compared(d: &[(u32, u32)]) -> Vec<(u32, u32)> {
    native::sort_by(d, |a: &(u32, u32), b: &(u32, u32)| a.0.cmp(&b.1))
}
