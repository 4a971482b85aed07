// expect: rejected E0103
// A `Cell<i32>` captured by a `move` closure that only reads it: the fix
// reads it once on the host (`let c = c.get();`). A closure that also sets
// it gets advice only: its writes would be lost.
use std::cell::Cell;

pub fn read(data: &[i32], c: Cell<i32>) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(c.get()))
}

pub fn write(data: &[i32], c: Cell<i32>) -> i32 {
    native::reduce(data, 0, move |a, b| {
        c.set(c.get().wrapping_add(1));
        a.wrapping_add(b)
    })
}
