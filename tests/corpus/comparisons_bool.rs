// All six comparisons producing bools, combined with `&&`, `||`, `^` on bool
// and cast `bool as i32`: admit.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let lt = a < b;
        let le = a <= k;
        let gt = b > k;
        let ge = a >= 0;
        let eq = a == b;
        let ne = b != k;
        let any = (lt && le) || (gt ^ ge);
        let all = eq || ne;
        a.wrapping_add(any as i32).wrapping_add((all as i32) << 1)
    })
}
