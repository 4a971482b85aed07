//! What `symbols` reads from each kind of input: the definitions and
//! references of the shared fixtures (`callee` defined in one input, the
//! kernel `kern` calling it in another), in every container nvcc and NVRTC
//! write, compressed fatbins and LTOIR (through the probe link) included.

mod common;

use backend_nvptx::symbols::{self, SymbolReader, SymbolTable};
use backend_nvptx::Arch;
use common::{fixtures, input};
use passes::lower::plan::{DeviceAbi, ParamType};

fn read(name: &str, bytes: &[u8], wanted: &[&str]) -> SymbolTable {
    let wanted: Vec<String> = wanted.iter().map(|w| w.to_string()).collect();
    SymbolReader::new(Arch::SM_90)
        .read(&input(name, bytes), &wanted)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn callee_abi() -> DeviceAbi {
    DeviceAbi {
        params: vec![ParamType::Scalar { bytes: 4 }; 2],
        ret: Some(ParamType::Scalar { bytes: 4 }),
    }
}

/// (defined, references) as sorted names.
fn names(t: &SymbolTable) -> (Vec<&str>, Vec<&str>) {
    (
        t.defines.keys().map(String::as_str).collect(),
        t.references.iter().map(String::as_str).collect(),
    )
}

#[test]
fn the_callee_is_defined_with_its_parameters_wherever_it_sits() {
    let f = fixtures();
    for (name, bytes) in [
        ("callee.ptx", &f.callee_ptx),
        ("callee.ltoir", &f.callee_ltoir),
    ] {
        let t = read(name, bytes, &["callee"]);
        assert_eq!(names(&t), (vec!["callee"], vec![]), "{name}");
        assert_eq!(t.defines["callee"].abi, Some(callee_abi()), "{name}");
        assert!(t.unreadable.is_empty(), "{name}: {:?}", t.unreadable);
        assert_eq!(t.defines["callee"].ltoir_only, name.ends_with(".ltoir"));
    }
    // A cubin's symbol table has no parameter types.
    let t = read("callee.cubin", &f.callee_cubin, &[]);
    assert_eq!(names(&t), (vec!["callee"], vec![]));
    assert_eq!(t.defines["callee"].abi, None);
    // CUDA source: compiled to PTX first.
    let t = read("callee.cu", common::CALLEE_CU.as_bytes(), &[]);
    assert_eq!(t.defines["callee"].abi, Some(callee_abi()));
}

#[test]
fn the_kernel_references_the_callee_in_every_container() {
    let f = fixtures();
    for (name, bytes) in [
        ("kernel.ptx", &f.kernel_ptx),
        // cubin + PTX entries, zstd-compressed by nvcc 13's default
        ("kernel.fatbin", &f.kernel_fatbin),
        ("kernel.o", &f.kernel_object),
    ] {
        let t = read(name, bytes, &[]);
        assert_eq!(names(&t), (vec!["kern"], vec!["callee"]), "{name}");
        assert!(t.defines["kern"].kernel, "{name}: `kern` is a kernel");
        assert!(t.unreadable.is_empty(), "{name}: {:?}", t.unreadable);
    }
}

#[test]
fn ltoir_answers_for_the_wanted_symbols_through_the_probe() {
    let f = fixtures();
    // Only what is asked about is seen: `callee` is not defined here, and
    // the LTOIR containers (bare, fatbin, object, library) say so.
    for (name, bytes) in [
        ("kernel.ltoir", &f.kernel_ltoir),
        ("kernel_lto.fatbin", &f.kernel_lto_fatbin),
        ("kernel_lto.o", &f.kernel_lto_object),
        ("libkernel.a", &f.lto_library),
    ] {
        let t = read(name, bytes, &["callee", "kern"]);
        assert!(t.unreadable.is_empty(), "{name}: {:?}", t.unreadable);
        assert!(!t.defines.contains_key("callee"), "{name}");
    }
    // A definition among other code, and what it references in turn.
    let t = read(
        "callee_with_kernel.ltoir",
        &f.callee_with_kernel_ltoir,
        &["callee", "nothing"],
    );
    assert_eq!(names(&t), (vec!["callee"], vec![]));
    assert_eq!(t.defines["callee"].abi, Some(callee_abi()));
    assert!(t.defines["callee"].ltoir_only);
}

#[test]
fn ptx_declarations_parse_with_their_linkage_and_parameters() {
    let t = symbols::parse_ptx(
        r#"
.version 9.0
.target sm_90
.address_size 64
// .visible .func commented_out(.param .b32 x)
.extern .func  (.param .b64 func_retval0) ext_fn
(
	.param .b64 ext_fn_param_0
)
;
.func internal_fn(.param .b32 x) { ret; }
.weak .func weak_fn() { ret; }
.visible .func  (.param .align 8 .b8 func_retval0[16]) agg(
	.param .f32 agg_param_0,
	.param .align 4 .b8 agg_param_1[12]
)
{
	{ .param .b64 param0; call.uni (retval0), ext_fn, (param0); }
	ret;
}
.visible .entry kern(.param .u64 .ptr .global .align 4 kern_param_0) { ret; }
"#,
    );
    assert_eq!(names(&t), (vec!["agg", "kern", "weak_fn"], vec!["ext_fn"]));
    assert_eq!(
        t.defines["agg"].abi,
        Some(DeviceAbi {
            params: vec![
                ParamType::Scalar { bytes: 4 },
                ParamType::Aggregate { bytes: 12 }
            ],
            ret: Some(ParamType::Aggregate { bytes: 16 }),
        })
    );
    assert!(t.defines["weak_fn"].weak);
    assert!(t.defines["kern"].kernel);
}

#[test]
fn check_names_unresolved_and_multiply_defined_symbols() {
    let f = fixtures();
    let kernel = read("kernel.ptx", &f.kernel_ptx, &[]);
    let callee = read("callee.ptx", &f.callee_ptx, &[]);
    let problems = symbols::check(&[("kernel.ptx".into(), kernel.clone())]);
    assert_eq!(
        problems.to_string(),
        "undefined device symbol `callee`, referenced by `kernel.ptx`: no input defines it"
    );
    let both = [
        ("kernel.ptx".to_string(), kernel),
        ("callee.ptx".to_string(), callee.clone()),
    ];
    assert!(symbols::check(&both).is_empty());
    let twice = [
        ("callee.ptx".to_string(), callee.clone()),
        (
            "callee.cubin".to_string(),
            read("callee.cubin", &f.callee_cubin, &[]),
        ),
    ];
    assert_eq!(
        symbols::check(&twice).to_string(),
        "device symbol `callee` is defined by more than one input: `callee.ptx`, `callee.cubin`"
    );
    // The toolkit's own symbols are never unresolved.
    let printf = SymbolTable {
        references: ["vprintf".to_string(), "__nv_sinf".to_string()].into(),
        ..Default::default()
    };
    assert!(symbols::check(&[("p.ptx".into(), printf)]).is_empty());
}
