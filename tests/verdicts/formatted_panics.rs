// expect: admitted
// Formatted `panic!` and `assert!` inside a callback trap like literal ones:
// the message is built only on the path that panics.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        if b == i32::MIN {
            panic!("bad value {}", b);
        }
        assert!(a != 7, "a was {}", a);
        a.wrapping_add(b)
    })
}
