//! Classifying device-code files: real CUDA 13 outputs, damaged copies of
//! them, and arbitrary mutations (which must never panic).

mod common;

use backend_nvptx::container::{describe, Item, FATBIN_MAGIC};
use common::{fixtures, CALLEE_CU};
use proptest::prelude::*;

/// The tree without sizes: kind, name, arch and LTOIR-ness per line.
fn shape(item: &Item, depth: usize, out: &mut String) {
    out.push_str(&"  ".repeat(depth));
    out.push_str(&format!("{}: {}", item.name, item.kind));
    if let Some(arch) = &item.arch {
        out.push_str(&format!(" {arch}"));
    }
    if item.carries_ltoir() {
        out.push_str(" [LTOIR]");
    }
    out.push('\n');
    for child in &item.children {
        shape(child, depth + 1, out);
    }
}

fn shape_of(name: &str, bytes: &[u8]) -> String {
    let description = describe(name, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut out = String::new();
    shape(&description.root, 0, &mut out);
    out
}

#[test]
fn real_outputs_are_described() {
    let f = fixtures();
    let cases: Vec<(&str, &[u8], &str)> = vec![
        ("kernel.ptx", &f.kernel_ptx, "kernel.ptx: PTX compute_90\n"),
        ("kernel.ltoir", &f.kernel_ltoir, "kernel.ltoir: LTOIR lto_90 [LTOIR]\n"),
        ("callee.cubin", &f.callee_cubin, "callee.cubin: cubin sm_90\n"),
        ("callee.cu", CALLEE_CU.as_bytes(), "callee.cu: CUDA source\n"),
        (
            "kernel_lto.fatbin",
            &f.kernel_lto_fatbin,
            "kernel_lto.fatbin: fatbin [LTOIR]\n  entry 1: PTX compute_90\n  entry 2: LTOIR lto_90 [LTOIR]\n",
        ),
        (
            "kernel_plain.fatbin",
            &f.kernel_lto_fatbin_uncompressed,
            "kernel_plain.fatbin: fatbin [LTOIR]\n  entry 1: PTX compute_90\n  entry 2: LTOIR lto_90 [LTOIR]\n",
        ),
        (
            "kernel.fatbin",
            &f.kernel_fatbin,
            "kernel.fatbin: fatbin\n  entry 1: cubin sm_90\n  entry 2: PTX compute_90\n",
        ),
        (
            "kernel_lto.o",
            &f.kernel_lto_object,
            "kernel_lto.o: host object [LTOIR]\n  __nv_relfatbin: fatbin [LTOIR]\n    entry 1: PTX compute_90\n    entry 2: LTOIR lto_90 [LTOIR]\n",
        ),
        (
            "kernel.o",
            &f.kernel_object,
            "kernel.o: host object\n  __nv_relfatbin: fatbin\n    entry 1: cubin sm_90\n    entry 2: PTX compute_90\n",
        ),
        ("host.o", &f.host_object, "host.o: host object\n"),
        (
            "libkernel.a",
            &f.lto_library,
            "libkernel.a: static library [LTOIR]\n  kernel_with_a_long_member_name_lto.o: host object [LTOIR]\n    __nv_relfatbin: fatbin [LTOIR]\n      entry 1: PTX compute_90\n      entry 2: LTOIR lto_90 [LTOIR]\n  host.o: host object\n",
        ),
    ];
    for (name, bytes, expected) in cases {
        assert_eq!(shape_of(name, bytes), expected, "{name}");
    }
}

#[test]
fn facts_are_read_from_the_bytes() {
    let f = fixtures();
    let text = describe("kernel_lto.fatbin", &f.kernel_lto_fatbin)
        .unwrap()
        .render();
    assert!(text.contains("compressed (zstd)"), "{text}");
    assert!(text.contains("PTX ISA 9.0"), "{text}");
    assert!(text.contains(", carries LTOIR"), "{text}");
    // Uncompressed payloads are checked and read: the PTX's kernels show.
    let text = describe("kernel_plain.fatbin", &f.kernel_lto_fatbin_uncompressed)
        .unwrap()
        .render();
    assert!(!text.contains("compressed"), "{text}");
    assert!(text.contains("kernels: kern"), "{text}");
    let text = describe("callee.cubin", &f.callee_cubin).unwrap().render();
    assert!(text.contains("relocatable, functions: callee"), "{text}");
    let text = describe("host.o", &f.host_object).unwrap().render();
    assert!(
        text.contains("x86-64, relocatable, no device code"),
        "{text}"
    );
    let lib = describe("libkernel.a", &f.lto_library).unwrap();
    assert_eq!(
        lib.ltoir_paths(),
        ["libkernel.a › kernel_with_a_long_member_name_lto.o › __nv_relfatbin › entry 2"]
    );
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn damaged_fatbins_are_located_errors() {
    let f = fixtures();
    // Container body size beyond the file.
    let mut bytes = f.kernel_lto_fatbin.clone();
    let len = bytes.len() as u64;
    put_u64(&mut bytes, 8, len);
    let err = describe("bad.fatbin", &bytes).unwrap_err();
    assert_eq!(err.location, "bad.fatbin");
    assert_eq!(err.offset, 0);
    assert!(err.message.contains("claims a 16-byte header"), "{err}");

    // First entry's payload size beyond its container.
    let mut bytes = f.kernel_lto_fatbin.clone();
    put_u64(&mut bytes, 16 + 8, 1 << 40);
    let err = describe("bad.fatbin", &bytes).unwrap_err();
    assert_eq!(err.location, "bad.fatbin › entry 1");
    assert_eq!(err.offset, 16);
    assert!(
        err.message.contains("claims a 1099511627776-byte payload"),
        "{err}"
    );

    // Unknown entry kind.
    let mut bytes = f.kernel_lto_fatbin.clone();
    bytes[16] = 5;
    let err = describe("bad.fatbin", &bytes).unwrap_err();
    assert!(err.message.contains("unknown fatbin entry kind 5"), "{err}");

    // The same damage inside a host object names the section.
    let mut object = f.kernel_lto_object.clone();
    let at = object
        .windows(4)
        .position(|w| w == FATBIN_MAGIC.to_le_bytes())
        .expect("fatbin in the object");
    put_u64(&mut object, at + 8, u64::MAX);
    let err = describe("kernel_lto.o", &object).unwrap_err();
    assert_eq!(err.location, "kernel_lto.o › __nv_relfatbin");
    assert_eq!(err.offset, at as u64);

    // An uncompressed PTX entry whose payload is not PTX.
    let mut bytes = f.kernel_lto_fatbin_uncompressed.clone();
    let header = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
    bytes[16 + header] = 0xff;
    let err = describe("bad.fatbin", &bytes).unwrap_err();
    assert!(err.message.contains("does not hold PTX text"), "{err}");
}

#[test]
fn damaged_libraries_are_located_errors() {
    let f = fixtures();
    let mut lib = f.lto_library.clone();
    // The first member header sits at 8; its size field at 8+48.
    lib[8 + 48..8 + 58].copy_from_slice(b"99999999  ");
    let err = describe("libkernel.a", &lib).unwrap_err();
    assert!(err.message.contains("damaged archive"), "{err}");

    let mut lib = f.lto_library.clone();
    let name_at = lib
        .windows(b"host.o/".len())
        .position(|w| w == b"host.o/")
        .expect("short member name");
    let data_at = name_at + 60;
    lib[data_at..data_at + 4].copy_from_slice(b"junk");
    let err = describe("libkernel.a", &lib).unwrap_err();
    assert_eq!(err.location, "libkernel.a(host.o)");
    assert!(err.message.contains("unknown content"), "{err}");
}

#[test]
fn unknown_files_are_errors() {
    for (name, bytes) in [
        ("notes.txt", b"just some text\n".as_slice()),
        ("empty.bin", b"".as_slice()),
        ("elf32", b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0".as_slice()),
        ("thin.a", b"!<thin>\n".as_slice()),
        ("source.cu", b"int x = 1;\0".as_slice()),
    ] {
        let err = describe(name, bytes).unwrap_err();
        assert!(err.location.starts_with(name), "{name}: {err}");
        assert!(!err.message.is_empty());
    }
}

/// Every prefix of every real file: an answer or an error, never a panic.
#[test]
fn every_truncation_is_handled() {
    let f = fixtures();
    for (name, bytes) in [
        ("f.fatbin", &f.kernel_lto_fatbin),
        ("p.fatbin", &f.kernel_lto_fatbin_uncompressed),
        ("k.o", &f.kernel_lto_object),
        ("l.a", &f.lto_library),
        ("c.cubin", &f.callee_cubin),
        ("k.ltoir", &f.kernel_ltoir),
    ] {
        for len in 0..bytes.len() {
            let _ = describe(name, &bytes[..len]);
        }
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let f = fixtures();
    vec![
        f.kernel_lto_fatbin.clone(),
        f.kernel_lto_fatbin_uncompressed.clone(),
        f.kernel_lto_object.clone(),
        f.lto_library.clone(),
        f.callee_cubin.clone(),
        f.kernel_ptx.clone(),
        f.kernel_ltoir.clone(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random overwrites (bytes, and u32/u64 fields set to extreme values)
    /// of real files never make `describe` panic.
    #[test]
    fn mutated_inputs_never_panic(
        seed in 0usize..7,
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u64>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = seeds()[seed].clone();
        for (at, width, value) in edits {
            let at = at.index(bytes.len());
            let value = match width {
                0 => vec![value as u8],
                1 => (value as u32).to_le_bytes().to_vec(),
                2 => value.to_le_bytes().to_vec(),
                _ => u64::MAX.to_le_bytes().to_vec(),
            };
            for (i, b) in value.into_iter().enumerate() {
                if let Some(slot) = bytes.get_mut(at + i) {
                    *slot = b;
                }
            }
        }
        if truncate {
            let len = cut.index(bytes.len() + 1);
            bytes.truncate(len);
        }
        let _ = describe("mutated", &bytes);
    }

    /// Arbitrary bytes, whatever their name.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), cu in any::<bool>()) {
        let _ = describe(if cu { "x.cu" } else { "x" }, &bytes);
    }
}
