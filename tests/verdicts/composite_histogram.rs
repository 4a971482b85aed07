// expect: admitted
// `histogram` of structs and tuples: the bin function reads fields at
// rustc's offsets.
#[derive(Clone, Copy)]
pub struct Sample {
    pub sensor: u16,
    pub value: f64,
}

/// Samples per sensor.
pub fn per_sensor(data: &[Sample], sensors: usize) -> Vec<u64> {
    native::histogram(data, sensors, |s| usize::from(s.sensor))
}

/// Pairs by their second field's low bits.
pub fn by_low_bits(data: &[(f32, u32)]) -> Vec<u64> {
    native::histogram(data, 16, |p| (p.1 & 15) as usize)
}
