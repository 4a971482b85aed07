// expect: admitted
// Closures built inside a callback and handed to helpers: a generic
// `F: Fn` parameter, an `impl Fn` parameter, `FnMut` state, a closure
// returned by a helper, captures by value and by reference (into the
// callback's own environment). On the GPU each such closure is the struct
// of its captures; only the callback's own closure crosses to the device
// as rustc laid it out. Each reduce operation is `max` (associative).
fn apply<F: Fn(i32) -> i32>(f: F, x: i32) -> i32 {
    f(x).wrapping_add(f(x.wrapping_add(1)))
}

fn apply_impl(f: impl Fn(i32) -> i32, x: i32) -> i32 {
    f(x).wrapping_mul(3).wrapping_add(f(x.wrapping_sub(1)))
}

fn twice_mut<F: FnMut(i32) -> i32>(mut f: F, x: i32) -> i32 {
    let y = f(x);
    f(y)
}

fn compose<F: Fn(i32) -> i32, G: Fn(i32) -> i32>(f: F, g: G) -> impl Fn(i32) -> i32 {
    move |x| g(f(x))
}

fn pick<F: Fn(i32, i32) -> bool>(better: F, a: i32, b: i32) -> i32 {
    if better(a, b) {
        a
    } else {
        b
    }
}

pub fn by_ref(data: &[i32], k: i32) -> Vec<i32> {
    native::transform(data, move |x| {
        let g = |y: i32| y.wrapping_mul(k) ^ x;
        apply(g, x)
    })
}

pub fn by_value(data: &[i32], k: i32) -> Vec<i32> {
    native::transform(data, move |x| {
        apply(move |y| y ^ k, x).wrapping_add(apply_impl(move |y| y.wrapping_sub(k), x))
    })
}

pub fn counter(data: &[i32], k: i32) -> Vec<i32> {
    native::transform(data, move |x| {
        let mut calls = 0;
        let r = twice_mut(
            |y| {
                calls += 1;
                y.wrapping_add(k)
            },
            x,
        );
        r.wrapping_add(calls)
    })
}

pub fn composed(data: &[i32], k: i32, m: i32) -> Vec<i32> {
    native::transform(data, move |x| compose(move |a: i32| a ^ k, move |b: i32| b.wrapping_mul(m))(x))
}

pub fn mixed(data: &[f64], s: f32, o: u8) -> Vec<f64> {
    native::transform(data, move |x| {
        let f = move |v: f64| v * s as f64 + o as f64;
        f(x) + apply(|i| i + o as i32, 3) as f64
    })
}

pub fn largest(data: &[i32], bias: i32) -> i32 {
    native::reduce(data, i32::MIN, move |a, b| pick(move |x, y| x.wrapping_add(bias) > y.wrapping_add(bias), a, b).max(a.max(b)))
}
