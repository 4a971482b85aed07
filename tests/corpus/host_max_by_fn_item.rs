// Host code whose optimised MIR has debug info holding a function item in
// an inlined scope (`debug compare => <&usize as Ord>::cmp;`, from
// `Iterator::max`): it imports like any other.
pub fn biggest(sizes: &mut Vec<usize>, quick: bool) -> usize {
    if quick {
        sizes.retain(|&n| n <= 1025);
    }
    *sizes.iter().max().unwrap_or(&0) + 3
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}
