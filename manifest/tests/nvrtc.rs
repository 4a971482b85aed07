//! The instantiation text compiles with NVRTC, as the backend compiles it
//! (LTOIR with -dlto, PTX without), including every scalar layout.

use manifest::provider::{emit_translation_unit, KernelRequest, Operation, RadixMoves};
use manifest::{
    EnvLayout, Provider, RegistrationId, Scalar, Shape, Signature, Variant, ELEMENT_SCALARS,
};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;

type Create = unsafe extern "C" fn(
    *mut *mut c_void,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type Compile = unsafe extern "C" fn(*mut c_void, c_int, *const *const c_char) -> c_int;
type Size = unsafe extern "C" fn(*mut c_void, *mut usize) -> c_int;
type Get = unsafe extern "C" fn(*mut c_void, *mut c_char) -> c_int;
type Destroy = unsafe extern "C" fn(*mut *mut c_void) -> c_int;

struct Nvrtc {
    lib: libloading::Library,
    _builtins: libloading::Library,
}

fn nvrtc() -> Nvrtc {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.nvidia/nvidia/cu13/lib");
    // NVRTC dlopens its builtins by soname: load them first by path.
    // SAFETY: loading NVIDIA's libraries runs their initialisers only.
    let builtins = unsafe { libloading::Library::new(dir.join("libnvrtc-builtins.so.13.0")) }
        .unwrap_or_else(|e| panic!("{e}: run scripts/setup.sh (nvidia-cuda-nvrtc wheel)"));
    let lib = unsafe { libloading::Library::new(dir.join("libnvrtc.so.13")) }.unwrap();
    Nvrtc {
        lib,
        _builtins: builtins,
    }
}

/// Compiles `source`; Ok(output size) or Err(log).
fn compile(source: &str, options: &[&str]) -> Result<usize, String> {
    let n = nvrtc();
    // SAFETY: NVRTC's documented C API, called with valid pointers.
    unsafe {
        let create: libloading::Symbol<Create> = n.lib.get(b"nvrtcCreateProgram").unwrap();
        let compile: libloading::Symbol<Compile> = n.lib.get(b"nvrtcCompileProgram").unwrap();
        let log_size: libloading::Symbol<Size> = n.lib.get(b"nvrtcGetProgramLogSize").unwrap();
        let log: libloading::Symbol<Get> = n.lib.get(b"nvrtcGetProgramLog").unwrap();
        let out_size: libloading::Symbol<Size> = if options.contains(&"-dlto") {
            n.lib.get(b"nvrtcGetLTOIRSize").unwrap()
        } else {
            n.lib.get(b"nvrtcGetPTXSize").unwrap()
        };
        let destroy: libloading::Symbol<Destroy> = n.lib.get(b"nvrtcDestroyProgram").unwrap();
        let src = CString::new(source).unwrap();
        let name = CString::new("instantiation.cu").unwrap();
        let mut program = std::ptr::null_mut();
        assert_eq!(
            create(
                &mut program,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null()
            ),
            0
        );
        let opts: Vec<CString> = options.iter().map(|o| CString::new(*o).unwrap()).collect();
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let status = compile(program, ptrs.len() as c_int, ptrs.as_ptr());
        let result = if status == 0 {
            let mut size = 0usize;
            assert_eq!(out_size(program, &mut size), 0);
            Ok(size)
        } else {
            let mut size = 0usize;
            log_size(program, &mut size);
            let mut buffer = vec![0u8; size.max(1)];
            log(program, buffer.as_mut_ptr() as *mut c_char);
            Err(String::from_utf8_lossy(&buffer).into_owned())
        };
        destroy(&mut program);
        result
    }
}

/// `source` compiles with CCCL's headers (the sort's agents) to LTOIR with
/// -dlto and to PTX without, each to something.
fn compiles_to_ltoir_and_ptx(source: &str) {
    let cccl = format!(
        "-I{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../.nvidia/nvidia/cu13/include/cccl")
            .display()
    );
    for options in [
        &["-arch=sm_90", "-rdc=true", "-dlto", cccl.as_str()][..],
        &["-arch=sm_90", "-rdc=true", cccl.as_str()][..],
    ] {
        let size = compile(source, options).unwrap_or_else(|log| panic!("{options:?}: {log}"));
        assert!(size > 0);
    }
}

fn every_scalar_env() -> EnvLayout {
    let mut captures: Vec<(String, Scalar)> = Vec::new();
    for (i, s) in Scalar::ALL.iter().filter(|s| s.is_capturable()).enumerate() {
        captures.push((format!("c{i}"), *s));
        captures.push((format!("p{i}"), Scalar::U8));
    }
    EnvLayout::from_captures(&captures).unwrap()
}

fn thunk(
    provider: Provider,
    registration: u32,
    signature: Signature,
    env: EnvLayout,
) -> KernelRequest {
    KernelRequest::Callback {
        provider,
        registration: RegistrationId(registration),
        signature,
        op: Operation::Thunk {
            symbol: format!("rcb_thunk_r{registration}"),
            variant: Variant::RustLtoir,
        },
        env,
        ties: manifest::Ties::ByPosition,
    }
}

fn requests() -> Vec<KernelRequest> {
    let env = every_scalar_env();
    vec![
        thunk(
            Provider::Reduce,
            0,
            Signature::fold(Scalar::I32),
            env.clone(),
        ),
        KernelRequest::Callback {
            provider: Provider::Reduce,
            registration: RegistrationId(0),
            signature: Signature::fold(Scalar::I32),
            op: Operation::Cpp {
                expr: "a + b + (int)env.c2".into(),
            },
            env,
            ties: manifest::Ties::ByPosition,
        },
        KernelRequest::Callback {
            provider: Provider::Reduce,
            registration: RegistrationId(1),
            signature: Signature::fold(Scalar::I32),
            op: Operation::Thunk {
                symbol: "rcb_thunk_r1".into(),
                variant: Variant::RustPtx,
            },
            env: EnvLayout::empty(),
            ties: manifest::Ties::ByPosition,
        },
        KernelRequest::Copy,
    ]
}

/// Every provider over every element type, with a thunk and with a C++
/// operation, captures or none.
fn every_provider() -> Vec<KernelRequest> {
    let mut out = Vec::new();
    let mut registration = 0;
    let captures = EnvLayout::from_captures(&[("k", Scalar::I64), ("m", Scalar::U8)]).unwrap();
    for provider in Provider::ALL {
        for (i, &t) in ELEMENT_SCALARS.iter().enumerate() {
            // A second element type for the maps: the next one round.
            let u = ELEMENT_SCALARS[(i + 3) % ELEMENT_SCALARS.len()];
            let signature = provider.shape().signature(t, u);
            let env = if i % 2 == 0 {
                captures.clone()
            } else {
                EnvLayout::empty()
            };
            out.push(thunk(
                provider,
                registration,
                signature.clone(),
                env.clone(),
            ));
            let expr = match provider.shape() {
                Shape::Fold | Shape::Zip => "a + b",
                Shape::Map => "a * 3 + 1",
                Shape::Predicate | Shape::RefPredicate => "a > 0",
                Shape::Compare | Shape::Key => "a < b",
                Shape::Same => "a == b",
                Shape::Probe => "a < b",
                Shape::Bin => "(unsigned long long)a",
                Shape::Chain => chain_expr(provider),
                // The fold; keys run as `==` finds them.
                Shape::ByKey => "a + b",
            };
            out.push(KernelRequest::Callback {
                provider,
                registration: RegistrationId(registration),
                signature,
                op: Operation::Cpp { expr: expr.into() },
                env,
                ties: manifest::Ties::ByPosition,
            });
            registration += 1;
        }
    }
    out
}

#[test]
fn every_provider_and_element_type_compiles() {
    let tu = emit_translation_unit(&every_provider()).unwrap();
    assert!(tu.needs_cccl);
    // One kernel a provider, three for the merge sort, six for the
    // segmented sort, two for the merge and the by-keys.
    assert_eq!(tu.kernels.len(), 2 * 10 * (14 + 3 + 6 + 2 + 2 * 2));
    compiles_to_ltoir_and_ptx(&tu.source);
}

/// A chain's C++ operation: the fold, whether the later value wins (the
/// first minimum), or which elements a collect keeps.
fn chain_expr(provider: Provider) -> &'static str {
    match provider {
        Provider::ChainPick => "b < a",
        Provider::ChainCollect => "a > 0",
        _ => "a + b",
    }
}

/// The chains over (T, R) pairs beyond the element types' round: `bool`
/// values (`any`, `all`, a collect of a test), the narrowest and widest
/// inputs, narrowing and widening maps (a collect compacts its values in
/// place for the former, its elements for the latter), with a thunk and with
/// a C++ operation, captures or none.
#[test]
fn chains_compile_over_bool_narrow_and_wide_types() {
    use Scalar::*;
    let pairs = [
        (I8, Bool),
        (F64, Bool),
        (I8, F64),
        (F64, I8),
        (U16, U8),
        (I32, I64),
        (F32, F32),
        (U64, U16),
        (F32, F64),
        (U64, U8),
        (F32, Bool),
        (U8, U32),
    ];
    let captures = EnvLayout::from_captures(&[("k", Scalar::F64), ("m", Scalar::Bool)]).unwrap();
    let mut requests = Vec::new();
    let mut registration = 0;
    let chains = [
        Provider::ChainReduce,
        Provider::ChainPick,
        Provider::ChainCollect,
    ];
    for provider in chains {
        for (i, &(t, r)) in pairs.iter().enumerate() {
            let signature = Shape::Chain.signature(t, r);
            assert!(signature.fits(provider), "{signature}");
            let env = if i % 2 == 0 {
                captures.clone()
            } else {
                EnvLayout::empty()
            };
            requests.push(thunk(
                provider,
                registration,
                signature.clone(),
                env.clone(),
            ));
            let expr = match (provider, r) {
                (Provider::ChainReduce, Bool) => "a || b",
                // The captures, read as a select's predicate reads them.
                (Provider::ChainCollect, _) if !env.is_empty() => "(double)a > env.k || env.m",
                _ => chain_expr(provider),
            };
            requests.push(KernelRequest::Callback {
                provider,
                registration: RegistrationId(registration),
                signature,
                op: Operation::Cpp { expr: expr.into() },
                env,
                ties: manifest::Ties::ByPosition,
            });
            registration += 1;
        }
    }
    let tu = emit_translation_unit(&requests).unwrap();
    assert!(!tu.needs_cccl);
    assert_eq!(tu.kernels.len(), 2 * chains.len() * pairs.len());
    compiles_to_ltoir_and_ptx(&tu.source);
}

/// Indexed chains (an `enumerate`: the stage thunk takes each element's
/// index) in every chain provider: values that are the index alone (wider
/// than 1-, 2- and 4-byte elements, a collect then keeps its kept
/// elements' positions; as wide as 8-byte ones, compacted in place), and
/// `(usize, T)` pairs of scalar and composite elements, with captures and
/// without.
#[test]
fn indexed_chains_compile() {
    use manifest::{Element, Field, Layout};
    let pair = |t: Element| {
        let (size, align) = (t.size(), t.align());
        Element::Composite(Layout {
            name: format!("(usize, {})", t.name()),
            size: (8 + size).next_multiple_of(align.max(8)),
            align: align.max(8),
            fields: vec![
                Field {
                    name: "0".into(),
                    offset: 0,
                    element: Element::Scalar(Scalar::Usize),
                },
                Field {
                    name: "1".into(),
                    offset: 8,
                    element: t,
                },
            ],
        })
    };
    let usize_ = Element::Scalar(Scalar::Usize);
    let mut inputs: Vec<Element> = [
        Scalar::U8,
        Scalar::I16,
        Scalar::F32,
        Scalar::U64,
        Scalar::F64,
    ]
    .map(Element::Scalar)
    .to_vec();
    inputs.push(composites()[1].clone());
    let captures = EnvLayout::from_captures(&[("k", Scalar::F64), ("m", Scalar::Bool)]).unwrap();
    let mut requests = Vec::new();
    let mut registration = 0;
    let chains = [
        Provider::ChainReduce,
        Provider::ChainPick,
        Provider::ChainCollect,
    ];
    for provider in chains {
        for t in &inputs {
            for r in [usize_.clone(), pair(t.clone())] {
                let signature = Signature::indexed_chain(t.clone(), r);
                assert!(signature.fits(provider), "{signature}");
                let env = if registration % 2 == 0 {
                    captures.clone()
                } else {
                    EnvLayout::empty()
                };
                requests.push(thunk(provider, registration, signature, env));
                registration += 1;
            }
        }
    }
    let tu = emit_translation_unit(&requests).unwrap();
    assert_eq!(tu.kernels.len(), requests.len());
    // The stage takes the index; a collect keeps positions where its
    // values are wider than its elements.
    assert!(tu
        .source
        .contains("__device__ unsigned int rcb_thunk_r0_stage(const void *env, unsigned int x, unsigned long long i, unsigned long long *out);"));
    assert!(tu
        .source
        .contains("rcb::CollectStorage<256, 23, unsigned char, unsigned long long, true>"));
    compiles_to_ltoir_and_ptx(&tu.source);
}

#[test]
fn nvrtc_compiles_instantiations_to_ltoir_and_ptx() {
    let tu = emit_translation_unit(&requests()).unwrap();
    assert_eq!(tu.nvrtc_options, ["--device-int128"]);
    let extra: Vec<&str> = tu.nvrtc_options.iter().map(String::as_str).collect();
    let ltoir = compile(
        &tu.source,
        &[&["-arch=sm_90", "-rdc=true", "-dlto"], &extra[..]].concat(),
    )
    .unwrap_or_else(|log| panic!("{log}"));
    assert!(ltoir > 0);
    let ptx = compile(
        &tu.source,
        &[&["-arch=sm_90", "-rdc=true"], &extra[..]].concat(),
    )
    .unwrap_or_else(|log| panic!("{log}"));
    assert!(ptx > 0);
    // Without 128-bit captures no option is needed.
    let plain = emit_translation_unit(&[KernelRequest::Copy]).unwrap();
    assert!(plain.nvrtc_options.is_empty());
    compile(&plain.source, &["-arch=sm_90", "-rdc=true", "-dlto"])
        .unwrap_or_else(|log| panic!("{log}"));
}

#[test]
fn nvrtc_rejects_a_layout_the_compiler_disagrees_with() {
    let tu = emit_translation_unit(&requests()).unwrap();
    let env = every_scalar_env();
    // Pretend the manifest said the environment is 8 bytes larger.
    let wrong = tu.source.replacen(
        &format!("sizeof(rcb_reduce_i32_r0_rust_ltoir_env) == {}", env.size),
        &format!(
            "sizeof(rcb_reduce_i32_r0_rust_ltoir_env) == {}",
            env.size + 8
        ),
        1,
    );
    assert_ne!(wrong, tu.source);
    let log = compile(
        &wrong,
        &["-arch=sm_90", "-rdc=true", "-dlto", "--device-int128"],
    )
    .unwrap_err();
    assert!(
        log.contains("environment ABI of registration 0: size"),
        "{log}"
    );
}

/// A composite element as the frontend measures it: `(u8, u32)` as rustc
/// lays it out (the u32 first), a 12-byte triple, and a 24-byte struct
/// holding a nested tuple, with padding.
fn composites() -> Vec<manifest::Element> {
    use manifest::{Element, Field, Layout};
    let field = |name: &str, offset, s: Scalar| Field {
        name: name.into(),
        offset,
        element: Element::Scalar(s),
    };
    vec![
        Element::Composite(Layout {
            name: "(u8, u32)".into(),
            size: 8,
            align: 4,
            fields: vec![field("0", 4, Scalar::U8), field("1", 0, Scalar::U32)],
        }),
        Element::Composite(Layout {
            name: "(f32, f32, i32)".into(),
            size: 12,
            align: 4,
            fields: vec![
                field("0", 0, Scalar::F32),
                field("1", 4, Scalar::F32),
                field("2", 8, Scalar::I32),
            ],
        }),
        Element::Composite(Layout {
            name: "geo::Body".into(),
            size: 24,
            align: 8,
            fields: vec![
                field("0.0", 16, Scalar::U16),
                field("0.1", 0, Scalar::F64),
                field("1", 8, Scalar::I8),
                field("2", 12, Scalar::F32),
            ],
        }),
    ]
}

#[test]
fn composite_elements_compile_in_the_providers_that_take_them() {
    let mut requests = Vec::new();
    let mut registration = 0;
    let captures = EnvLayout::from_captures(&[("k", Scalar::I64)]).unwrap();
    let takers: Vec<Provider> = Provider::ALL
        .into_iter()
        .filter(|p| p.takes_composites())
        .collect();
    for &provider in &takers {
        for (i, c) in composites().into_iter().enumerate() {
            let scalar = ELEMENT_SCALARS[i * 3];
            // Composite in and out; a map from a composite to a scalar and
            // from a scalar to a composite; a zip of a composite and a
            // scalar either way round.
            let mut signatures = vec![provider.shape().signature(c.clone(), c.clone())];
            if matches!(
                provider.shape(),
                Shape::Map | Shape::Zip | Shape::Chain | Shape::ByKey
            ) {
                signatures.push(provider.shape().signature(c.clone(), scalar));
                signatures.push(provider.shape().signature(scalar, c.clone()));
            }
            for signature in signatures {
                assert!(signature.fits(provider), "{provider} {signature}");
                let env = if registration % 2 == 0 {
                    captures.clone()
                } else {
                    EnvLayout::empty()
                };
                requests.push(thunk(provider, registration, signature, env));
                registration += 1;
            }
        }
    }
    // Every provider.
    assert_eq!(takers, Provider::ALL.to_vec());
    let tu = emit_translation_unit(&requests).unwrap();
    // The sort's three kernels a registration, the merge's and the
    // by-keys' two, one for the others.
    let stages: usize = requests
        .iter()
        .map(|r| match r {
            KernelRequest::Callback { provider, .. } => manifest::stages(*provider).len(),
            KernelRequest::Copy => 1,
            KernelRequest::Radix {
                element, computed, ..
            } => manifest::provider::radix_stages(element, computed.is_some()).len(),
        })
        .sum();
    assert_eq!(tu.kernels.len(), stages);
    assert!(
        tu.source.contains("struct alignas(4) rcb_elem_u8_u32_"),
        "{}",
        tu.source
    );
    assert!(tu
        .kernels
        .iter()
        .any(|k| k.name.starts_with("rcb_reduce_geo_Body_r")));
    compiles_to_ltoir_and_ptx(&tu.source);
}

/// The element a radix sort kernel of `requests` sorts.
fn radix_element<'r>(requests: &'r [KernelRequest], k: &manifest::Kernel) -> &'r manifest::Element {
    requests
        .iter()
        .find_map(|r| match r {
            KernelRequest::Radix {
                registration,
                element,
                ..
            } if Some(*registration) == k.registration => Some(element),
            _ => None,
        })
        .unwrap()
}

/// The radix sort's kernels compile for every element type sorted on
/// itself, in each order and direction its type allows, and for composites
/// sorted on key fields at their offsets (a decomposer of `RadixKey`s):
/// the launch facts the manifest says are the ones CUB's policy gives (the
/// kernels assert them).
#[test]
fn radix_sorts_compile_for_every_key_type_and_composite_keys() {
    use manifest::{Element, KeyOrder, RadixKey, Stage};
    let key = |field: &str, offset, scalar: Scalar, order, descending| RadixKey {
        field: field.into(),
        offset,
        scalar,
        order,
        descending,
    };
    let mut requests = Vec::new();
    let mut registration = 0u32;
    let mut push = |element: Element, keys: Vec<RadixKey>| {
        requests.push(KernelRequest::Radix {
            registration: RegistrationId(registration),
            element,
            keys,
            computed: None,
        });
        registration += 1;
    };
    for (i, &s) in ELEMENT_SCALARS.iter().enumerate() {
        let order = if s.is_float() {
            KeyOrder::Total
        } else if s.is_signed() {
            KeyOrder::Signed
        } else {
            KeyOrder::Unsigned
        };
        push(Element::Scalar(s), vec![key("", 0, s, order, i % 2 == 1)]);
    }
    let [pair, triple, body] = <[Element; 3]>::try_from(composites()).unwrap();
    push(
        pair,
        vec![key(".1", 0, Scalar::U32, KeyOrder::Unsigned, true)],
    );
    push(
        triple,
        vec![
            key(".2", 8, Scalar::I32, KeyOrder::Signed, false),
            key(".0", 0, Scalar::F32, KeyOrder::Total, true),
        ],
    );
    push(
        body,
        vec![
            key(".0.0", 16, Scalar::U16, KeyOrder::Unsigned, false),
            key(".0.1", 0, Scalar::F64, KeyOrder::Unsigned, false),
            key(".1", 8, Scalar::I8, KeyOrder::Signed, true),
        ],
    );
    let tu = emit_translation_unit(&requests).unwrap();
    assert!(tu.needs_cccl);
    // The 24-byte body is gathered: a kernel packs its keys with indices
    // first, and one gathers the bodies last; the others are CUB's keys.
    assert_eq!(
        tu.kernels.len(),
        requests.len() * Stage::RADIX.len() + 2,
        "{:?}",
        tu.kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
    );
    for k in &tu.kernels {
        let element = radix_element(&requests, k);
        assert_eq!(
            k.params,
            manifest::provider::radix_params(k.stage, RadixMoves::of(element, false), None),
            "{}",
            k.name
        );
        assert!(
            !matches!(k.stage, Stage::RadixKeys | Stage::RadixGather)
                || element.size() >= manifest::RADIX_GATHER_BYTES,
            "{}",
            k.name
        );
        assert!(
            k.thunk.is_none(),
            "{}: the keys are fields: no thunk",
            k.name
        );
    }
    // The body's keys packed: `.0.0` u16 at 0, `.0.1` f64 at 8, `.1` i8
    // at 16, copied from 16, 0 and 8.
    for copy in [
        "*reinterpret_cast<unsigned short *>(reinterpret_cast<unsigned char *>(&key) + 0) =\n            *reinterpret_cast<const unsigned short *>(reinterpret_cast<const unsigned char *>(input + i) + 16);",
        "*reinterpret_cast<unsigned long long *>(reinterpret_cast<unsigned char *>(&key) + 8) =\n            *reinterpret_cast<const unsigned long long *>(reinterpret_cast<const unsigned char *>(input + i) + 0);",
        "*reinterpret_cast<unsigned char *>(reinterpret_cast<unsigned char *>(&key) + 16) =\n            *reinterpret_cast<const unsigned char *>(reinterpret_cast<const unsigned char *>(input + i) + 8);",
        "rcb::radix_pass_indexed<",
        "rcb::radix_gather(output, input, indices, trivial, len, end_bit);",
    ] {
        assert!(tu.source.contains(copy), "{copy}\n{}", tu.source);
    }
    assert!(tu.source.contains("cuda::std::tuple<rcb::RadixKey<unsigned short, rcb::RADIX_UNSIGNED, false> &, rcb::RadixKey<unsigned long long, rcb::RADIX_UNSIGNED, false> &, rcb::RadixKey<unsigned char, rcb::RADIX_SIGNED, true> &>"));
    compiles_to_ltoir_and_ptx(&tu.source);
}

/// The radix sort of computed keys (`sort_by_key(|x| x >> 4)`) compiles
/// for keys of every size CUB's pairs policy tells apart (1 and 2 bytes
/// by the value's size, 3, 4 and 8 bytes by whether the value is under 8
/// bytes, a 16-byte tuple) with values of 1 to 24 bytes, scalars and
/// composites: the launch facts the manifest says are CUB's (the kernels
/// assert them), the key kernel calls the key thunk with the environment
/// when there is one, and the passes move keys and elements.
#[test]
fn computed_key_radix_sorts_compile_for_every_key_and_value_size() {
    use manifest::provider::ComputedKey;
    use manifest::{EnvLayout, Stage};
    let [pair, triple, body] = <[manifest::Element; 3]>::try_from(composites()).unwrap();
    let scalar = manifest::Element::Scalar;
    let keys: [&[Scalar]; 8] = [
        &[Scalar::U8],
        &[Scalar::I16],
        &[Scalar::Bool, Scalar::U8, Scalar::I8],
        &[Scalar::Char],
        &[Scalar::U8, Scalar::U16],
        &[Scalar::I64],
        &[Scalar::U32, Scalar::Bool, Scalar::I8],
        &[Scalar::I64, Scalar::U32],
    ];
    let values = [
        scalar(Scalar::U8),
        scalar(Scalar::I16),
        scalar(Scalar::F32),
        scalar(Scalar::U64),
        pair,
        triple,
        body,
    ];
    let env = EnvLayout::from_fields(&[("mask".to_string(), Scalar::U64, 0)], 8, 8).unwrap();
    let mut requests = Vec::new();
    for (k, fields) in keys.iter().enumerate() {
        let (key, radix) = manifest::computed_key(fields).unwrap();
        for (v, value) in values.iter().enumerate() {
            // Every key with a scalar and a composite value; the 1- and
            // 2-byte keys (whose policy depends on the value's size) with
            // every value.
            if key.size() > 2 && v % 3 != k % 3 {
                continue;
            }
            let registration = requests.len() as u32;
            requests.push(KernelRequest::Radix {
                registration: RegistrationId(registration),
                element: value.clone(),
                keys: radix.clone(),
                computed: Some(ComputedKey {
                    key: key.clone(),
                    thunk: format!("rmir_key{registration}_key"),
                    env: if registration.is_multiple_of(2) {
                        env.clone()
                    } else {
                        EnvLayout::empty()
                    },
                }),
            });
        }
    }
    let tu = emit_translation_unit(&requests).unwrap();
    assert!(tu.needs_cccl);
    let gathered = requests
        .iter()
        .filter(|r| matches!(r, KernelRequest::Radix { element, .. } if element.size() >= manifest::RADIX_GATHER_BYTES))
        .count();
    assert!(gathered > 0);
    assert_eq!(
        tu.kernels.len(),
        requests.len() * (Stage::RADIX.len() + 1) + gathered
    );
    for k in &tu.kernels {
        let r = k.registration.unwrap().0;
        let env = if r.is_multiple_of(2) {
            Some(&env)
        } else {
            None
        };
        let moves = RadixMoves::of(radix_element(&requests, k), true);
        assert_eq!(
            k.params,
            manifest::provider::radix_params(k.stage, moves, env),
            "{}",
            k.name
        );
        assert_eq!(
            k.thunk.is_some(),
            k.stage == Stage::RadixKeys,
            "{}: only the key kernel calls a thunk",
            k.name
        );
    }
    assert!(tu
        .source
        .contains("extern \"C\" __device__ void rmir_key0_key(const void *env, unsigned int x, unsigned char *out);"));
    compiles_to_ltoir_and_ptx(&tu.source);
}
