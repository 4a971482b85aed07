// expect: admitted
// A closure built inside a callback that captures several fields of one
// value (edition 2021's precise captures): rustc's MIR text prints such a
// closure with one field per captured variable (`{ s: copy _8 }` for
// captures of `s.a` and `s.b`), and the frontend recovers the fields it
// leaves out: from the borrows or copies made just before, or from the
// captured places. Each reduce operation is a wrapping sum (associative
// and commutative).
#[derive(Clone, Copy)]
struct W {
    lo: u8,
    hi: u64,
}

#[derive(Clone, Copy)]
struct Weights {
    lo: u8,
    hi: u64,
}

// By reference: the `fold` closure borrows `w.lo` and `w.hi`.
pub fn two_fields_by_ref(data: &[u64], w: Weights) -> u64 {
    native::reduce(data, 0u64, move |a, b| {
        let w = w;
        let mix = (1u32..4u32).fold(w.hi, |acc, i| {
            acc.wrapping_mul(w.lo as u64 | 1).wrapping_add(w.hi ^ i as u64)
        });
        a.wrapping_add(b).wrapping_add(mix)
    })
}

// By value (`move`): copies of `t.0` and `t.1`, and a tuple's third field
// with another variable after it.
pub fn tuple_fields_by_value(data: &[u64], c: u64) -> u64 {
    let t = (3u8, c, 7u16);
    native::reduce(data, 0u64, move |a, b| {
        let t = t;
        let k = b.wrapping_mul(3);
        let mix = (0u32..3u32).fold(0u64, move |acc, i| {
            acc.wrapping_add(t.0 as u64)
                .wrapping_add(t.1 >> i)
                .wrapping_add(t.2 as u64 ^ k)
        });
        a.wrapping_add(b).wrapping_add(mix)
    })
}

// By value, where rustc prints the operands as places (`{ t: copy (_3.0:
// u8), x: copy _5 }` for captures of `t.0`, `t.1`, `t.2` and `x`): the
// missing ones are read from `t`'s place and `x`'s.
pub fn fields_by_value_as_places(data: &[u64], c: u64) -> Vec<u64> {
    let t = (3u8, c | 0x9e37, 7u16);
    native::transform(data, move |x: u64| {
        let t = t;
        let by_ref = (1u32..4u32).fold(t.1, |acc, i| {
            acc.wrapping_mul(t.0 as u64 | 1).wrapping_add(t.1 ^ i as u64)
        });
        let by_value = (0u32..3u32).fold(x, move |acc, i| {
            acc.wrapping_add(t.0 as u64)
                .wrapping_add(t.1 >> i)
                .wrapping_add(t.2 as u64 ^ x)
        });
        by_ref ^ by_value
    })
}

// Named fields of a struct by value in a `move` closure: reading the value
// whole first inside it (`let v = w;`) makes the closure capture `w`
// whole (closure_field_captures_unsupported.rs is the form without it).
pub fn read_whole_first(data: &[u64], w: W) -> Vec<u64> {
    native::transform(data, move |x: u64| {
        let w = w;
        (0u32..3u32).fold(x, move |acc, i| {
            let v = w;
            acc.wrapping_add(v.lo as u64).wrapping_add(v.hi >> i)
        })
    })
}
