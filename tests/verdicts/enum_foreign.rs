// expect: rejected E0109
// An enum of another crate (`std::ops::Bound`): its definition is not in
// this crate, so the GPU side has no layout for it; the diagnostic says
// so in the user's terms.
use std::ops::Bound;

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let bound = if a > b { Bound::Included(a) } else { Bound::Excluded(b) };
        match bound {
            Bound::Included(x) => x,
            _ => b,
        }
    })
}
