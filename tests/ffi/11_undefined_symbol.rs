// link: lib/helpers.cu lib/leaf.cu
// expect: rejected
// The libraries given do not define `ffi_absent` (a renamed declaration
// is looked up by the symbol it links to).
extern "C" {
    #[link_name = "ffi_absent"]
    fn absent(x: i32) -> i32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a ^ unsafe { absent(b) })
}
