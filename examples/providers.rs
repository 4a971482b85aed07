//! One registration per provider, each over another element type, with
//! captured run-time values: `driver build examples/providers.rs -o DIR`.
//! The CPU reference of each is `native`'s function of the same name; on a
//! GPU the same closures run through `native::gpu::Gpu`'s methods
//! (examples/gpu-providers checks every provider and type there).

/// The largest reading, never below a floor.
pub fn peak(readings: &[f32], floor: f32) -> f32 {
    native::reduce(readings, floor, |a, b| a.max(b))
}

/// Running totals of byte counts, wrapping at 2^64.
pub fn running_total(sizes: &[u64]) -> Vec<u64> {
    native::inclusive_scan(sizes, |a, b| a.wrapping_add(b))
}

/// Where each record starts, after a header of `header` bytes.
pub fn offsets(lengths: &[u32], header: u32) -> Vec<u32> {
    native::exclusive_scan(lengths, header, |a, b| a.wrapping_add(b))
}

/// Celsius readings (tenths of a degree) to Fahrenheit.
pub fn fahrenheit(tenths: &[i16]) -> Vec<f32> {
    native::transform(tenths, |t| t as f32 * 0.18 + 32.0)
}

/// `a * x + y` with a captured `a`.
pub fn axpy(x: &[f64], y: &[f64], a: f64) -> Vec<f64> {
    native::transform2(x, y, move |x, y| a * x + y)
}

/// The loudest sample of each segment.
pub fn loudest(samples: &[i8], segments: &[usize]) -> Vec<i8> {
    native::segmented_reduce(samples, segments, i8::MIN, |a, b| a.max(b))
}

/// The ids at or above a captured threshold, in order.
pub fn at_least(ids: &[u16], lo: u16) -> Vec<u16> {
    native::select(ids, move |id| id >= lo)
}

/// Timestamps by their second (stable: equal seconds keep their order).
pub fn by_second(nanos: &[i64]) -> Vec<i64> {
    native::sort_by(nanos, |a, b| (a / 1_000_000_000).cmp(&(b / 1_000_000_000)))
}
