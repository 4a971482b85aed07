//! The host-side check of a provider's operator contract, as Rust source
//! compiled into the host reference's shim of `native` (see
//! `hostref::SHIM`): `check_contract` runs the callback itself (with the
//! captures its caller gave it) over edge and pseudo-random values of its
//! element type and returns what it found, one line a violation.

pub const CONTRACT: &str = r#"
/// A law the operation breaks, with a counterexample.
pub fn check_contract<T: Copy, F: Fn(T, T) -> T>(op: &F, commutative: bool) -> Vec<String> {
    let Some(vals) = lint_values::<T>() else { return Vec::new() };
    let float = lint_float::<T>();
    let mut found = Vec::new();
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let call = |a: T, b: T| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(a, b))).ok();
    'assoc: for (i, &a) in vals.iter().enumerate() {
        for (j, &b) in vals.iter().enumerate() {
            // Every triple of the first 24 values (the edges), then a
            // pseudo-random walk over the rest.
            let cs: Vec<T> = if i < 24 && j < 24 { vals[..24.min(vals.len())].to_vec() } else { vec![vals[(i * 31 + j * 17) % vals.len()]] };
            for c in cs {
                let (Some(ab), Some(bc)) = (call(a, b), call(b, c)) else { continue };
                let (Some(l), Some(r)) = (call(ab, c), call(a, bc)) else { continue };
                if !lint_same(l, r, &[a, b, c], float) {
                    found.push(format!("associative\top(op(a, b), c) = {} but op(a, op(b, c)) = {} for a = {}, b = {}, c = {}", lint_show(&l), lint_show(&r), lint_show(&a), lint_show(&b), lint_show(&c)));
                    break 'assoc;
                }
            }
        }
    }
    if commutative {
        'comm: for &a in &vals {
            for &b in &vals {
                let (Some(l), Some(r)) = (call(a, b), call(b, a)) else { continue };
                if !lint_same(l, r, &[a, b], float) {
                    found.push(format!("commutative\top(a, b) = {} but op(b, a) = {} for a = {}, b = {}", lint_show(&l), lint_show(&r), lint_show(&a), lint_show(&b)));
                    break 'comm;
                }
            }
        }
    }
    std::panic::set_hook(quiet);
    found
}

/// A law of strict weak orders the comparator breaks, with a counterexample.
pub fn check_order<T: Copy, C: Fn(T, T) -> bool>(less: &C) -> Vec<String> {
    let Some(vals) = lint_values::<T>() else { return Vec::new() };
    let mut found = Vec::new();
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let lt = |a: T, b: T| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| less(a, b))).ok();
    let edges = &vals[..24.min(vals.len())];
    'laws: {
        for &a in &vals {
            if lt(a, a) == Some(true) {
                found.push(format!("irreflexive\tless(a, a) is true for a = {}", lint_show(&a)));
                break 'laws;
            }
        }
        for &a in &vals {
            for &b in &vals {
                if lt(a, b) == Some(true) && lt(b, a) == Some(true) {
                    found.push(format!("asymmetric\tless(a, b) and less(b, a) are both true for a = {}, b = {}", lint_show(&a), lint_show(&b)));
                    break 'laws;
                }
            }
        }
        // Every triple of the edge values, then a pseudo-random walk.
        for (i, &a) in vals.iter().enumerate() {
            for (j, &b) in vals.iter().enumerate() {
                let cs: Vec<T> = if i < 24 && j < 24 { edges.to_vec() } else { vec![vals[(i * 31 + j * 17) % vals.len()]] };
                for c in cs {
                    let (Some(ab), Some(bc), Some(ac)) = (lt(a, b), lt(b, c), lt(a, c)) else { continue };
                    if ab && bc && !ac {
                        found.push(format!("transitive\tless(a, b) and less(b, c) but not less(a, c) for a = {}, b = {}, c = {}", lint_show(&a), lint_show(&b), lint_show(&c)));
                        break 'laws;
                    }
                    let (Some(ba), Some(cb), Some(ca)) = (lt(b, a), lt(c, b), lt(c, a)) else { continue };
                    if !ab && !ba && !bc && !cb && (ac || ca) {
                        found.push(format!("transitive in its ties\ta ~ b and b ~ c (neither is less) but not a ~ c for a = {}, b = {}, c = {}", lint_show(&a), lint_show(&b), lint_show(&c)));
                        break 'laws;
                    }
                }
            }
        }
    }
    std::panic::set_hook(quiet);
    found
}

fn lint_bytes<T>(x: &T) -> &[u8] {
    // SAFETY: `x` is a live `T` of plain scalar bytes (checked by type name).
    unsafe { core::slice::from_raw_parts(x as *const T as *const u8, core::mem::size_of::<T>()) }
}

fn lint_f64<T: Copy>(x: T) -> f64 {
    // SAFETY: only called for `f32` and `f64` (`lint_float`).
    unsafe {
        if core::mem::size_of::<T>() == 4 { core::mem::transmute_copy::<T, f32>(&x) as f64 } else { core::mem::transmute_copy::<T, f64>(&x) }
    }
}

/// A value of a numeric `T` as `{:?}` prints it (`T` need not be `Debug`:
/// `native`'s functions ask only `Copy`); another type by its name.
fn lint_show<T: Copy>(x: &T) -> String {
    macro_rules! show {
        ($($t:ident)*) => {$(
            if core::any::type_name::<T>() == stringify!($t) {
                // SAFETY: T is $t, by name.
                return format!("{:?}", unsafe { core::mem::transmute_copy::<T, $t>(x) });
            }
        )*};
    }
    show!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char);
    format!("a value of `{}`", core::any::type_name::<T>())
}

/// `Some(epsilon)` for a float element type.
fn lint_float<T>() -> Option<f64> {
    match core::any::type_name::<T>() {
        "f32" => Some(f32::EPSILON as f64),
        "f64" => Some(f64::EPSILON),
        _ => None,
    }
}

/// Equal bits for integers; for floats, equal within 16 ulps of the
/// largest magnitude among the operands and results (rounding differs by
/// grouping even for an associative operation such as `+`), NaN equal to NaN.
fn lint_same<T: Copy>(l: T, r: T, operands: &[T], float: Option<f64>) -> bool {
    match float {
        None => lint_bytes(&l) == lint_bytes(&r),
        Some(eps) => {
            let (x, y) = (lint_f64(l), lint_f64(r));
            if x.is_nan() || y.is_nan() { return x.is_nan() && y.is_nan(); }
            if x == y { return true; }
            let scale = operands.iter().map(|&o| lint_f64(o).abs()).fold(x.abs().max(y.abs()), f64::max);
            (x - y).abs() <= 16.0 * eps * scale
        }
    }
}

/// Edge values first (up to 24), then pseudo-random ones, of a numeric `T`.
fn lint_values<T: Copy>() -> Option<Vec<T>> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state };
    macro_rules! ints {
        ($($t:ident)*) => {$(
            if core::any::type_name::<T>() == stringify!($t) {
                let mut v: Vec<$t> = vec![0, 1, 2, 3, 7, $t::MAX, $t::MAX - 1, $t::MIN, $t::MIN + 1, $t::MAX / 2, $t::MIN / 2];
                v.extend([(-1i64) as $t, (-2i64) as $t, (-7i64) as $t, 100 as $t, (-100i64) as $t, 0x55 as $t, 0x7f as $t]);
                v.dedup();
                while v.len() < 24 { v.push(next() as $t); }
                for _ in 0..40 { v.push(next() as $t); v.push(((next() % 201) as $t).wrapping_sub(100 as $t)); }
                // SAFETY: T is $t, by name.
                return Some(v.into_iter().map(|x| unsafe { core::mem::transmute_copy::<$t, T>(&x) }).collect());
            }
        )*};
    }
    ints!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);
    macro_rules! floats {
        ($($t:ident)*) => {$(
            if core::any::type_name::<T>() == stringify!($t) {
                let mut v: Vec<$t> = vec![0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 1e3, -1e3, 0.1, 7.0, -0.75];
                while v.len() < 24 { v.push(((next() % 2_000_001) as f64 / 1000.0 - 1000.0) as $t); }
                for _ in 0..80 { v.push(((next() % 2_000_001) as f64 / 1000.0 - 1000.0) as $t); }
                // SAFETY: T is $t, by name.
                return Some(v.into_iter().map(|x| unsafe { core::mem::transmute_copy::<$t, T>(&x) }).collect());
            }
        )*};
    }
    floats!(f32 f64);
    None
}
"#;
