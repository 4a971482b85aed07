//! The shared input generator and build fingerprints.

use manifest::{fill_inputs, generate_inputs, input_value, Fingerprint, InputSpec, INPUT_BOUND};

#[test]
fn generator_is_pinned() {
    // These values are the cross-machine contract: host and GPU runner must
    // produce exactly these, forever (a change needs a new GENERATOR name).
    let first: Vec<i32> = (0..12).map(|i| input_value(1, i)).collect();
    let far: Vec<i32> = (0..4)
        .map(|i| input_value(u64::MAX, (1u64 << 28) - 1 + i))
        .collect();
    insta::assert_snapshot!(format!(
        "seed 1: {first:?}\nseed u64::MAX from 2^28-1: {far:?}"
    ));
}

#[test]
fn generator_is_random_access_and_deterministic() {
    let whole = generate_inputs(InputSpec {
        size: 5000,
        seed: 42,
    });
    let mut slice = vec![0; 1000];
    fill_inputs(42, 3000, &mut slice);
    assert_eq!(&whole[3000..4000], &slice[..]);
    assert_eq!(
        whole,
        generate_inputs(InputSpec {
            size: 5000,
            seed: 42
        })
    );
    assert_ne!(
        whole,
        generate_inputs(InputSpec {
            size: 5000,
            seed: 43
        })
    );
}

#[test]
fn generator_never_yields_zero_and_covers_its_range() {
    let data = generate_inputs(InputSpec {
        size: 2_000_000,
        seed: 7,
    });
    let mut seen = vec![0u32; 2 * INPUT_BOUND as usize + 1];
    for &v in &data {
        assert!(
            v != 0 && (-INPUT_BOUND..=INPUT_BOUND).contains(&v),
            "value {v}"
        );
        seen[(v + INPUT_BOUND) as usize] += 1;
    }
    // Every non-zero value appears (about 1000 times each); zero never.
    assert_eq!(seen[INPUT_BOUND as usize], 0);
    let present = seen.iter().filter(|&&c| c > 0).count();
    assert_eq!(present, 2 * INPUT_BOUND as usize);
    let (min, max) = (
        *seen.iter().filter(|&&c| c > 0).min().unwrap(),
        *seen.iter().max().unwrap(),
    );
    assert!(min > 800 && max < 1200, "counts between {min} and {max}");
}

#[test]
fn fingerprint_is_order_independent_and_sensitive() {
    let a = Fingerprint::of_inputs(&[("user.rs", b"fn main() {}".as_slice()), ("flags", b"-O3")]);
    let b = Fingerprint::of_inputs(&[("flags", b"-O3".as_slice()), ("user.rs", b"fn main() {}")]);
    assert_eq!(a, b);
    assert!(a.is_well_formed());
    // Moving bytes between a name and its payload changes the hash.
    let c = Fingerprint::of_inputs(&[("flags-", b"O3".as_slice()), ("user.rs", b"fn main() {}")]);
    assert_ne!(a, c);
    let d = Fingerprint::of_inputs(&[("flags", b"-O2".as_slice()), ("user.rs", b"fn main() {}")]);
    assert_ne!(a, d);
    let empty: [(&str, &[u8]); 0] = [];
    insta::assert_snapshot!(format!("{a}\n{}", Fingerprint::of_inputs(&empty)));
}
