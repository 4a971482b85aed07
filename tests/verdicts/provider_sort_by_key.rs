// expect: admitted
// Keys as `slice::sort_by_key` takes them: an unsigned key, an unsigned key
// of a signed element, a signed key with a capture, a `bool` key of a
// float, a `char` key, tuple keys (compared field by field, as `Ord`
// compares tuples), and the host API's method.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn by_bucket(data: &[u32]) -> Vec<u32> {
    native::sort_by_key(data, |x| x >> 4)
}

pub fn by_magnitude(data: &[i64]) -> Vec<i64> {
    native::sort_by_key(data, |x| x.unsigned_abs())
}

pub fn by_side(data: &[i32], pivot: i32) -> Vec<i32> {
    native::sort_by_key(data, move |x| (*x - pivot).signum())
}

pub fn whole_first(data: &[f32]) -> Vec<f32> {
    native::sort_by_key(data, |x| x.fract() != 0.0)
}

pub fn by_letter(data: &[u8]) -> Vec<u8> {
    native::sort_by_key(data, |x| char::from(b'a' + x % 26))
}

pub fn by_high_then_low(data: &[u32]) -> Vec<u32> {
    native::sort_by_key(data, |x| (x >> 4, x & 15))
}

pub fn by_sign_then_descending(data: &[i16]) -> Vec<i16> {
    native::sort_by_key(data, |x| (*x < 0, -(*x as i32), *x % 2 == 0))
}

pub fn on_gpu(gpu: &Gpu, data: &[u16]) -> Result<DeviceVec<u16>, Error> {
    gpu.sort_by_key(data, |x| *x % 7 != 0)
}
