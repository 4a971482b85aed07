//! The probe-struct method against real closures, through the machine's
//! rustc: hundreds of seeded random capture mixes in one batch (one rustc
//! run), the SPEC's example, and the edge cases (no captures, `bool`,
//! `char`, every stable scalar at once, a long list). `measure` fails on any
//! disagreement; this test also fails when it checked too little.

use frontend::closure_layout::{measure, place_captures, ClosureLayout};
use frontend::ty::Scalar;

/// splitmix64: a fixed, dependency-free sequence, so the mixes are the same
/// on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn stable() -> Vec<Scalar> {
    Scalar::ALL
        .into_iter()
        .filter(|s| !matches!(s, Scalar::F16 | Scalar::F128))
        .collect()
}

const RANDOM_MIXES: usize = 320;

fn mixes() -> Vec<Vec<Scalar>> {
    use Scalar::*;
    let types = stable();
    let mut mixes = vec![
        vec![U8, U16, U32, F64, I8, I64, U16],
        vec![],
        vec![Bool],
        vec![Char],
        vec![Bool, Char, Bool, U8],
        types.clone(),
        (0..24).map(|k| types[k % types.len()]).collect(),
    ];
    // Distinct random lists of 0 to 12 captures, repeated types included.
    let mut rng = Rng(0x5EED_C105);
    let mut random = Vec::new();
    while random.len() < RANDOM_MIXES {
        let n = rng.below(13);
        let mix: Vec<Scalar> = (0..n).map(|_| types[rng.below(types.len())]).collect();
        if !random.contains(&mix) && !mixes.contains(&mix) {
            random.push(mix);
        }
    }
    mixes.extend(random);
    mixes
}

#[test]
fn the_probe_struct_agrees_with_real_closures() {
    use Scalar::*;
    let mixes = mixes();
    let start = std::time::Instant::now();
    let measured = measure(&mixes).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} closures ({} captures, {} bytes compared) measured by {} in {:.1} s",
        measured.checked.probes,
        measured.checked.captures,
        measured.checked.bytes,
        measured.rustc,
        start.elapsed().as_secs_f64()
    );

    // Everything asked for was checked, both ways.
    assert_eq!(measured.layouts.len(), mixes.len());
    assert_eq!(measured.checked.probes, mixes.len());
    assert!(measured.checked.probes >= RANDOM_MIXES + 7);
    let captures: usize = mixes.iter().map(Vec::len).sum();
    assert_eq!(measured.checked.captures, captures);
    assert!(captures >= 1500, "{captures}");
    let bytes: u64 = mixes.iter().flatten().map(|s| s.size()).sum();
    assert_eq!(measured.checked.bytes as u64, bytes);

    for (mix, layout) in mixes.iter().zip(&measured.layouts) {
        let types: Vec<Scalar> = layout.fields.iter().map(|f| f.scalar).collect();
        assert_eq!(&types, mix);
        layout.validate().unwrap();
    }

    // The SPEC's measured closure: rustc 1.95 at -O, found by dumping a real closure.
    let spec = &measured.layouts[0];
    assert_eq!(spec.offsets(), [24, 20, 16, 0, 25, 8, 22]);
    assert_eq!((spec.size, spec.align), (32, 8));

    // No captures: a zero-sized closure.
    assert_eq!(
        measured.layouts[1],
        ClosureLayout {
            fields: vec![],
            captures: vec![],
            size: 0,
            align: 1
        }
    );
    assert_eq!((measured.layouts[2].size, measured.layouts[3].size), (1, 4));
    // Alignment first, then the larger niche first: `char`, the two
    // `bool`s, then the `u8`.
    assert_eq!(measured.layouts[4].offsets(), [4, 0, 5, 6]);

    // rustc reorders: declaration order would be wrong for most mixes.
    let reordered = measured
        .layouts
        .iter()
        .filter(|l| l.offsets() != c_offsets(l))
        .count();
    assert!(reordered > mixes.len() / 2, "{reordered}");

    // The names go with the offsets in capture order.
    let names = ["a", "b", "c", "d", "e", "f", "g"];
    let captures: Vec<(&str, Scalar)> = names.iter().copied().zip(mixes[0].clone()).collect();
    let placed = place_captures(&captures, spec).unwrap();
    assert_eq!(
        placed
            .iter()
            .map(|p| (p.name.as_str(), p.offset))
            .collect::<Vec<_>>(),
        [
            ("a", 24),
            ("b", 20),
            ("c", 16),
            ("d", 0),
            ("e", 25),
            ("f", 8),
            ("g", 22)
        ]
    );
    assert!(place_captures(&captures[..6], spec).is_err());
    let mut wrong = captures.clone();
    wrong[0].1 = I8;
    assert!(place_captures(&wrong, spec).is_err());
}

/// Declaration-order C offsets, for comparison.
fn c_offsets(layout: &ClosureLayout) -> Vec<u64> {
    let mut at = 0u64;
    layout
        .fields
        .iter()
        .map(|f| {
            at = at.div_ceil(f.align) * f.align;
            let o = at;
            at += f.size;
            o
        })
        .collect()
}

#[test]
fn closures_with_the_same_captures_share_one_probe() {
    use Scalar::*;
    let measured = measure(&[vec![I32], vec![U8, F64], vec![I32], vec![]]).unwrap();
    assert_eq!(measured.checked.probes, 3);
    assert_eq!(measured.layouts[0], measured.layouts[2]);
    assert_eq!(measured.layouts[1].offsets(), [8, 0]);
}

#[test]
fn unstable_scalars_are_refused_before_rustc_runs() {
    use Scalar::*;
    let e = measure(&[vec![I32], vec![U8, F16]]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "closure 1, capture 1: `f16` is unstable, so no stable rustc can measure the \
         layout of a closure that captures it"
    );
}

#[test]
fn an_empty_batch_runs_no_probe() {
    let none: [Vec<Scalar>; 0] = [];
    let measured = measure(&none).unwrap();
    assert!(measured.layouts.is_empty());
    assert_eq!(measured.checked.probes, 0);
}
