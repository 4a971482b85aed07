//! The manifest schema: round trip, snapshot, and validation errors.

use manifest::provider::{emit_translation_unit, KernelRequest, Operation};
use manifest::{
    Callback, EnvLayout, Fingerprint, GridPolicy, KernelKind, LaunchFacts, Manifest, ParamKind,
    Provider, RegistrationId, Scalar, Signature, Stage, Variant, MANIFEST_FORMAT,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn sample() -> Manifest {
    let env = EnvLayout::from_captures(&[("k", Scalar::I32), ("m", Scalar::I64)]).unwrap();
    let r0 = RegistrationId(0);
    let r1 = RegistrationId(1);
    let tu = emit_translation_unit(&[
        KernelRequest::i32_reduce(
            r0,
            Operation::Thunk {
                symbol: "rcb_thunk_r0".into(),
                variant: Variant::RustLtoir,
            },
            env.clone(),
        ),
        KernelRequest::i32_reduce(
            r0,
            Operation::Cpp {
                expr: "a + b + env.k".into(),
            },
            env.clone(),
        ),
        KernelRequest::i32_reduce(
            r1,
            Operation::Thunk {
                symbol: "rcb_thunk_r1_ptx".into(),
                variant: Variant::RustPtx,
            },
            EnvLayout::empty(),
        ),
        KernelRequest::Copy,
    ])
    .unwrap();
    Manifest {
        format: MANIFEST_FORMAT.into(),
        fingerprint: Fingerprint::of_inputs(&[("user.rs", b"...")]),
        arch: "sm_90".into(),
        cubin: "user.cubin".into(),
        toolchain: BTreeMap::from([
            ("nvjitlink".to_string(), "13.0".to_string()),
            ("nvrtc".to_string(), "13.0".to_string()),
        ]),
        callbacks: vec![
            Callback {
                registration: r0,
                provider: Provider::Reduce,
                signature: Signature::fold(Scalar::I32),
                origin: Some("user.rs:3:20".into()),
                site: None,
                sort: None,
                pick: None,
                env,
            },
            Callback {
                registration: r1,
                provider: Provider::Reduce,
                signature: Signature::fold(Scalar::I32),
                origin: None,
                site: None,
                sort: None,
                pick: None,
                env: EnvLayout::empty(),
            },
        ],
        kernels: tu.kernels,
        device_libraries: Vec::new(),
    }
}

#[test]
fn manifest_round_trips() {
    let manifest = sample();
    manifest.validate().unwrap();
    let text = manifest.to_json();
    let back = Manifest::from_json(&text).unwrap();
    assert_eq!(back, manifest);
    assert_eq!(back.to_json(), text, "same manifest, same bytes");
    insta::assert_snapshot!(text);
}

#[test]
fn manifest_validation_errors() {
    type Edit = fn(&mut Manifest);
    let edits: Vec<(&str, Edit)> = vec![
        ("format", |m| m.format = "manifest/0".into()),
        ("fingerprint", |m| m.fingerprint = Fingerprint("XYZ".into())),
        ("cubin_path", |m| m.cubin = "../x.cubin".into()),
        ("duplicate_callback", |m| {
            let c = m.callbacks[0].clone();
            m.callbacks.push(c)
        }),
        ("edited_env", |m| m.callbacks[0].env.fields[1].offset = 4),
        ("kernel_name", |m| m.kernels[0].name = "bad name".into()),
        ("duplicate_kernel", |m| {
            m.kernels[1].name = m.kernels[0].name.clone()
        }),
        ("missing_callback", |m| {
            m.kernels[0].registration = Some(RegistrationId(9))
        }),
        ("missing_thunk", |m| m.kernels[0].thunk = None),
        ("cpp_with_thunk", |m| m.kernels[1].thunk = Some("t".into())),
        ("env_param_size", |m| {
            let p = m.kernels[0]
                .params
                .iter_mut()
                .find(|p| p.kind == ParamKind::Env)
                .unwrap();
            p.size = 12
        }),
        ("env_param_missing", |m| {
            m.kernels[0].params.pop();
        }),
        ("copy_with_registration", |m| {
            m.kernels[3].registration = Some(RegistrationId(0))
        }),
        ("block_size", |m| m.kernels[0].launch.block_size = 100),
        ("items_per_thread", |m| {
            m.kernels[0].launch.items_per_thread = 6
        }),
        ("blocks_per_sm", |m| {
            m.kernels[0].launch.grid = GridPolicy::TilesCappedBySms { blocks_per_sm: 0 }
        }),
        ("provider_of_kernel", |m| {
            m.kernels[0].kind = KernelKind::Provider(Provider::InclusiveScan)
        }),
        ("stage_of_reduce", |m| m.kernels[0].stage = Stage::Merge),
        ("select_returning_i32", |m| {
            m.callbacks[0].provider = Provider::Select;
            m.callbacks[0].signature = Signature::scalars(&[Scalar::I32], Scalar::I32)
        }),
        ("reduce_of_i128", |m| {
            m.callbacks[0].signature = Signature::fold(Scalar::I128)
        }),
    ];
    let mut out = String::new();
    for (name, edit) in edits {
        let mut m = sample();
        edit(&mut m);
        let _ = writeln!(out, "{name}: {}", m.validate().unwrap_err());
    }
    let unknown_field = sample().to_json().replacen("\"arch\"", "\"archh\"", 1);
    let _ = writeln!(
        out,
        "unknown_field: {}",
        Manifest::from_json(&unknown_field).unwrap_err()
    );
    insta::assert_snapshot!(out);
}

#[test]
fn grid_policy() {
    let facts = LaunchFacts::DEFAULT;
    let tile = 256 * 16;
    let cases = [
        (1u64, 1u32),
        (tile, 1),
        (tile + 1, 2),
        (1 << 28, 132 * 8),
        (u64::MAX, 132 * 8),
    ];
    for (n, want) in cases {
        assert_eq!(facts.grid.grid_size(n, &facts, 132), want, "n = {n}");
    }
    assert_eq!(facts.grid.max_grid_size(132), Some(1056));
}
