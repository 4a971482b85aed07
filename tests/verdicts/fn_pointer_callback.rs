// expect: rejected E0105
// A callback that is a fn-pointer value: its target is known only at run
// time, so there is nothing to compile for the GPU.
fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

pub fn entry(data: &[i32]) -> i32 {
    let f: fn(i32, i32) -> i32 = add;
    native::reduce(data, 0, f)
}
