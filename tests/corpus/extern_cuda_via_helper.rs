// A helper (not the closure) calls the CUDA driver API `cuMemAlloc_v2`:
// reject, reporting the chain closure -> alloc_probe -> cuMemAlloc_v2.
extern "C" {
    fn cuMemAlloc_v2(dptr: *mut u64, bytesize: usize) -> u32;
}

#[inline(never)]
fn alloc_probe(n: i32) -> i32 {
    let mut ptr = 0u64;
    let status = unsafe { cuMemAlloc_v2(&mut ptr, n as usize) };
    status as i32
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(alloc_probe(b)))
}
