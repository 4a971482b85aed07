//! `sums_mix(data, len, k, m, out)`: 0 on success, 1 on error (the message
//! on stderr).

use native::gpu::Gpu;

/// # Safety
///
/// `data` points to `len` readable `i32`s, `out` to one writable `i32`.
#[no_mangle]
pub unsafe extern "C" fn sums_mix(
    data: *const i32,
    len: usize,
    k: i32,
    m: u8,
    out: *mut i32,
) -> i32 {
    // SAFETY: the caller's contract.
    let data = unsafe { std::slice::from_raw_parts(data, len) };
    match Gpu::open(0).and_then(|gpu| sums::keyed::mix(&gpu, data, k, m)) {
        Ok(r) => {
            // SAFETY: the caller's contract.
            unsafe { *out = r };
            0
        }
        Err(e) => {
            eprintln!("sums_mix: {e}");
            1
        }
    }
}
