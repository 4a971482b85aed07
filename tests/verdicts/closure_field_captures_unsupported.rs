// expect: rejected E0109
// A `move` closure inside a callback capturing two named fields of one
// struct by value, where rustc's MIR text prints the first as a place
// (`{ w: copy (_3.0: u8) }`) and drops the second: the frontend cannot
// tell the second field's index from its name, so this is one E0109 with
// the workaround (read the value whole inside that closure), never a
// closure built with a field unset (closure_field_captures.rs has the
// workaround, admitted).
#[derive(Clone, Copy)]
struct W {
    lo: u8,
    hi: u64,
}

pub fn named_fields_by_value(data: &[u64], w: W) -> Vec<u64> {
    native::transform(data, move |x: u64| {
        let w = w;
        let a = (1u32..4u32).fold(w.hi, |acc, i| {
            acc.wrapping_mul(w.lo as u64 | 1).wrapping_add(w.hi ^ i as u64)
        });
        let b = (0u32..3u32).fold(x, move |acc, i| {
            acc.wrapping_add(w.lo as u64).wrapping_add(w.hi >> i)
        });
        a ^ b
    })
}
