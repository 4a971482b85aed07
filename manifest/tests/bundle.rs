//! Run bundles: round trip, parse errors, and checks against a manifest.

use manifest::bundle::{standard_case_inputs, STANDARD_SIZES};
use manifest::provider::{emit_translation_unit, KernelRequest, Operation};
use manifest::{
    BenchSpec, BenchVariant, Bundle, Callback, CaptureValue, Case, EnvLayout, Fingerprint,
    Manifest, Provider, RegistrationId, RegistrationRun, Scalar, Signature, Variant, BUNDLE_FORMAT,
    GENERATOR, MANIFEST_FORMAT,
};
use serde_json::json;
use std::fmt::Write as _;

fn manifest() -> Manifest {
    let env = EnvLayout::from_captures(&[("k", Scalar::I32)]).unwrap();
    let tu = emit_translation_unit(&[
        KernelRequest::i32_reduce(
            RegistrationId(0),
            Operation::Thunk {
                symbol: "rcb_thunk_r0".into(),
                variant: Variant::RustLtoir,
            },
            env.clone(),
        ),
        KernelRequest::Copy,
    ])
    .unwrap();
    Manifest {
        format: MANIFEST_FORMAT.into(),
        fingerprint: Fingerprint::of_inputs(&[("a", b"1")]),
        arch: "sm_90".into(),
        cubin: "a.cubin".into(),
        toolchain: Default::default(),
        callbacks: vec![Callback {
            registration: RegistrationId(0),
            provider: Provider::Reduce,
            signature: Signature::fold(Scalar::I32),
            origin: None,
            site: None,
            sort: None,
            pick: None,
            env,
        }],
        kernels: tu.kernels,
        device_libraries: Vec::new(),
    }
}

fn bundle() -> Bundle {
    Bundle {
        format: BUNDLE_FORMAT.into(),
        fingerprint: Fingerprint::of_inputs(&[("a", b"1")]),
        manifest: "manifest.json".into(),
        generator: GENERATOR.into(),
        registrations: vec![RegistrationRun {
            registration: RegistrationId(0),
            kernel: "rcb_reduce_i32_r0_rust_ltoir".into(),
            captures: vec![CaptureValue {
                name: "k".into(),
                value: json!(3),
            }],
            cases: vec![Case {
                size: 1025,
                seed: 1,
                offset: 1,
                init: 0,
                expected: 12,
            }],
        }],
        bench: Some(BenchSpec {
            size: 1 << 20,
            seeds: vec![1, 2],
            warmup: 5,
            repeats: 20,
            passes: 2,
            variants: vec![
                BenchVariant::Kernel {
                    label: "rust".into(),
                    kernel: "rcb_reduce_i32_r0_rust_ltoir".into(),
                    init: 0,
                    expected: vec![],
                },
                BenchVariant::Kernel {
                    label: "copy".into(),
                    kernel: "rcb_copy_i32".into(),
                    init: 0,
                    expected: vec![],
                },
                BenchVariant::DriverMemcpy {
                    label: "memcpy".into(),
                },
            ],
        }),
    }
}

#[test]
fn bundle_round_trips_and_checks() {
    let b = bundle();
    let text = b.to_json();
    let back = Bundle::from_json(&text).unwrap();
    assert_eq!(back, b);
    back.check_against(&manifest()).unwrap();
    // `offset` and `passes` have defaults.
    let minimal = text
        .replace("\"offset\": 1,", "")
        .replace("\"passes\": 2,", "");
    let parsed = Bundle::from_json(&minimal).unwrap();
    assert_eq!(parsed.registrations[0].cases[0].offset, 0);
    assert_eq!(parsed.bench.unwrap().passes, 2);
}

#[test]
fn bundle_errors() {
    let text = bundle().to_json();
    let mut out = String::new();
    let parse_cases: Vec<(&str, String)> = vec![
        ("not_json", "{".to_string()),
        ("format", text.replace("bundle/1", "bundle/9")),
        ("generator", text.replace(GENERATOR, "xorshift")),
        ("unknown_field", text.replacen("\"seed\"", "\"sead\"", 1)),
        (
            "negative_size",
            text.replacen("\"size\": 1025", "\"size\": -1", 1),
        ),
        (
            "zero_size",
            text.replacen("\"size\": 1025", "\"size\": 0", 1),
        ),
        ("offset", text.replacen("\"offset\": 1", "\"offset\": 4", 1)),
        (
            "manifest_path",
            text.replace("\"manifest.json\"", "\"../manifest.json\""),
        ),
        (
            "unknown_variant_kind",
            text.replace("driver_memcpy", "cub_sum"),
        ),
    ];
    for (name, t) in parse_cases {
        let _ = writeln!(out, "{name}: {}", Bundle::from_json(&t).unwrap_err());
    }
    type Edit = fn(&mut Bundle);
    let check_cases: Vec<(&str, Edit)> = vec![
        ("fingerprint_mismatch", |b| {
            b.fingerprint = Fingerprint::of_inputs(&[("a", b"2")])
        }),
        ("unknown_kernel", |b| {
            b.registrations[0].kernel = "rcb_nope".into()
        }),
        ("copy_as_reduce", |b| {
            b.registrations[0].kernel = "rcb_copy_i32".into()
        }),
        ("wrong_registration", |b| {
            b.registrations[0].registration = RegistrationId(5)
        }),
        ("missing_capture", |b| b.registrations[0].captures.clear()),
        ("capture_out_of_range", |b| {
            b.registrations[0].captures[0].value = json!(1u64 << 40)
        }),
        ("bench_unknown_kernel", |b| {
            if let Some(BenchVariant::Kernel { kernel, .. }) =
                b.bench.as_mut().map(|s| &mut s.variants[0])
            {
                *kernel = "rcb_nope".into();
            }
        }),
    ];
    for (name, edit) in check_cases {
        let mut b = bundle();
        edit(&mut b);
        let _ = writeln!(out, "{name}: {}", b.check_against(&manifest()).unwrap_err());
    }
    let mut b = bundle();
    if let Some(BenchVariant::Kernel { expected, .. }) =
        b.bench.as_mut().map(|s| &mut s.variants[0])
    {
        *expected = vec![1, 2, 3];
    }
    let _ = writeln!(out, "bench_expected_count: {}", b.validate().unwrap_err());
    let mut b = bundle();
    b.registrations.clear();
    let _ = writeln!(out, "no_registrations: {}", b.validate().unwrap_err());
    // A callback of the build that the bundle does not cover.
    let mut m = manifest();
    let mut extra = m.callbacks[0].clone();
    extra.registration = RegistrationId(1);
    m.callbacks.push(extra);
    let _ = writeln!(
        out,
        "callback_left_out: {}",
        bundle().check_against(&m).unwrap_err()
    );
    insta::assert_snapshot!(out);
}

#[test]
fn standard_cases_cover_the_brief() {
    let cases = standard_case_inputs();
    for size in STANDARD_SIZES {
        assert!(
            cases.iter().any(|(c, off)| c.size == size && *off == 0),
            "size {size}"
        );
    }
    assert!(cases.iter().any(|(c, _)| c.size == 1 << 28));
    for offset in 1..=3 {
        assert!(cases.iter().any(|(c, off)| *off == offset && c.size > 32));
    }
    let mut seeds: Vec<u64> = cases.iter().map(|(c, _)| c.seed).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), cases.len(), "distinct seeds");
}

#[test]
fn kernels_may_live_in_several_cubins() {
    let mut m = manifest();
    assert_eq!(m.cubins(), [m.cubin.as_str()]);
    let last = m.kernels.len() - 1;
    m.kernels[last].cubin = Some("callbacks.1.cubin".into());
    m.validate().unwrap();
    assert_eq!(m.cubins(), [m.cubin.as_str(), "callbacks.1.cubin"]);
    assert_eq!(m.cubin_of(&m.kernels[last]), "callbacks.1.cubin");
    assert_eq!(m.cubin_of(&m.kernels[0]), m.cubin);
    let back = Manifest::from_json(&m.to_json()).unwrap();
    assert_eq!(back, m);
    m.kernels[last].cubin = Some("../elsewhere.cubin".into());
    assert!(m
        .validate()
        .unwrap_err()
        .to_string()
        .contains("plain file name"));
}
