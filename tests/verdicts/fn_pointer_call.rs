// expect: rejected E0107
// A call through a fn pointer made inside the callback: the target is
// chosen at run time.
fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

pub fn entry(data: &[i32], sel: bool) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let f: fn(i32, i32) -> i32 = if sel { add } else { add };
        f(a, b)
    })
}
