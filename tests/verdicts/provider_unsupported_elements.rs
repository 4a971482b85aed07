// expect: rejected E0105
// Element types the providers do not take, one case or more per provider:
// 128-bit and pointer-sized integers, tuples where the provider takes none
// (tests/verdicts/composite_elements.rs has those it takes), references,
// and `bool` as a map's result.
pub fn wide(data: &[i128]) -> i128 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}

pub fn wide_scan(data: &[u128]) -> Vec<u128> {
    native::inclusive_scan(data, |a, b| a | b)
}

pub fn sized(data: &[usize]) -> Vec<usize> {
    native::sort_by(data, |a, b| a.cmp(b))
}

pub fn refs<'a>(data: &[&'a i32]) -> Vec<&'a i32> {
    native::select(data, |x| *x > 0)
}


pub fn flags(data: &[i32]) -> Vec<bool> {
    native::transform(data, |x| x > 0)
}

pub fn wide_offsets(data: &[i128], init: i128) -> Vec<i128> {
    native::exclusive_scan(data, init, |a, b| a.wrapping_add(b))
}

pub fn segment_sizes(data: &[isize], offsets: &[usize]) -> Vec<isize> {
    native::segmented_reduce(data, offsets, 0, |a, b| a.wrapping_add(b))
}
