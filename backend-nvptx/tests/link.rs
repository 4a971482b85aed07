//! Linking through nvJitLink with flags derived from the inputs' contents.
//! Needs no GPU: NVRTC, nvcc and nvJitLink run on the CPU.

mod common;

use backend_nvptx::nvjitlink::{InputType, Linker};
use backend_nvptx::{describe, Arch, ItemKind, LinkError, LinkInput, LinkOutput, LinkPlan};
use common::{fixtures, input, CALLEE_CU, KERNEL_CU};

/// One input set of the matrix: its inputs, and the inputs expected to
/// decide `-lto` (empty: no `-lto`).
struct Case {
    name: &'static str,
    inputs: Vec<LinkInput>,
    lto_decided_by: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    let f = fixtures();
    vec![
        Case {
            name: "PTX only",
            inputs: vec![input("kernel.ptx", &f.kernel_ptx), input("callee.ptx", &f.callee_ptx)],
            lto_decided_by: vec![],
        },
        Case {
            name: "LTOIR only",
            inputs: vec![input("kernel.ltoir", &f.kernel_ltoir), input("callee.ltoir", &f.callee_ltoir)],
            lto_decided_by: vec!["kernel.ltoir", "callee.ltoir"],
        },
        Case {
            name: "LTOIR caller, PTX callee",
            inputs: vec![input("kernel.ltoir", &f.kernel_ltoir), input("callee.ptx", &f.callee_ptx)],
            lto_decided_by: vec!["kernel.ltoir"],
        },
        Case {
            name: "LTOIR inside a fatbin",
            inputs: vec![
                input("kernel_lto.fatbin", &f.kernel_lto_fatbin),
                input("callee.ptx", &f.callee_ptx),
            ],
            lto_decided_by: vec!["kernel_lto.fatbin (kernel_lto.fatbin › entry 2)"],
        },
        Case {
            name: "LTOIR inside a -dc -dlto host object",
            inputs: vec![input("kernel_lto.o", &f.kernel_lto_object), input("callee.ptx", &f.callee_ptx)],
            lto_decided_by: vec!["kernel_lto.o (kernel_lto.o › __nv_relfatbin › entry 2)"],
        },
        Case {
            name: "LTOIR inside a static library",
            inputs: vec![input("libkernel.a", &f.lto_library), input("callee.ptx", &f.callee_ptx)],
            lto_decided_by: vec![
                "libkernel.a (libkernel.a › kernel_with_a_long_member_name_lto.o › __nv_relfatbin › entry 2)",
            ],
        },
        Case {
            name: "plain object and cubin, no LTOIR",
            inputs: vec![input("kernel.o", &f.kernel_object), input("callee.cubin", &f.callee_cubin)],
            lto_decided_by: vec![],
        },
    ]
}

fn expected_options(lto: bool, debug: bool, lineinfo: bool) -> Vec<String> {
    let mut options = vec!["-arch=sm_90".to_string()];
    if lto {
        options.push("-lto".to_string());
        options.push("-fma=0".to_string());
    }
    if debug {
        options.push("-g".to_string());
    }
    if lineinfo {
        options.push("-lineinfo".to_string());
    }
    options
}

/// {no debug, -g, -lineinfo} × every input set: each links, with the
/// expected flags, into an sm_90 executable cubin that holds the kernel.
#[test]
fn link_matrix() {
    let mut failures = Vec::new();
    let mut linked = 0;
    for case in cases() {
        for (debug, lineinfo) in [(false, false), (true, false), (false, true)] {
            let label = format!("{} (debug={debug}, lineinfo={lineinfo})", case.name);
            let mut plan = LinkPlan::new(Arch::SM_90);
            plan.inputs = case.inputs.clone();
            plan.debug = debug;
            plan.lineinfo = lineinfo;
            let explanation = plan.explain().unwrap_or_else(|e| panic!("{label}: {e}"));
            let lto = !case.lto_decided_by.is_empty();
            assert_eq!(
                explanation.options(),
                expected_options(lto, debug, lineinfo),
                "{label}"
            );
            assert_eq!(explanation.lto, lto, "{label}");
            if lto {
                let flag = explanation.flags.iter().find(|f| f.flag == "-lto").unwrap();
                assert_eq!(flag.decided_by, case.lto_decided_by, "{label}");
            }
            match plan.link() {
                Ok(out) => {
                    let cubin = describe("linked.cubin", &out.bytes)
                        .unwrap_or_else(|e| panic!("{label}: {e}"));
                    assert_eq!(cubin.kind(), ItemKind::Cubin, "{label}");
                    assert_eq!(cubin.root.arch.as_deref(), Some("sm_90"), "{label}");
                    assert!(
                        cubin.root.facts.iter().any(|f| f == "executable"),
                        "{label}: {:?}",
                        cubin.root.facts
                    );
                    let functions = cubin
                        .root
                        .facts
                        .iter()
                        .find(|f| f.starts_with("functions:"))
                        .cloned();
                    assert!(
                        functions
                            .as_deref()
                            .is_some_and(|f| f.split_whitespace().any(|w| w == "kern")),
                        "{label}: kernel missing from the cubin: {functions:?}"
                    );
                    linked += 1;
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "links failed:\n{}",
        failures.join("\n\n")
    );
    assert_eq!(linked, 21);
}

/// A `.cu` input is compiled by NVRTC to LTOIR when another input carries
/// LTOIR, else to PTX; it never decides `-lto` on its own.
#[test]
fn cuda_source_follows_the_other_inputs() {
    let f = fixtures();
    for (other, other_bytes, target, added_as, lto) in [
        (
            "callee.ltoir",
            &f.callee_ltoir,
            "Ltoir",
            InputType::Ltoir,
            true,
        ),
        ("callee.ptx", &f.callee_ptx, "Ptx", InputType::Ptx, false),
    ] {
        let plan = LinkPlan::new(Arch::SM_90)
            .with_input(input("kernel.cu", KERNEL_CU.as_bytes()))
            .with_input(input(other, other_bytes));
        let explanation = plan.explain().unwrap();
        assert_eq!(explanation.lto, lto, "{other}");
        let source = &explanation.inputs[0];
        let compile = source.compile.as_ref().expect("CUDA source is compiled");
        assert_eq!(format!("{:?}", compile.target), target);
        assert!(
            compile.options.contains(&"-rdc=true".to_string()),
            "{:?}",
            compile.options
        );
        assert_eq!(compile.options.contains(&"-dlto".to_string()), lto);
        assert_eq!(source.added_as, added_as);
        let out = plan.link().unwrap_or_else(|e| panic!("{other}: {e}"));
        assert_eq!(
            describe("o.cubin", &out.bytes).unwrap().kind(),
            ItemKind::Cubin
        );
    }
    // Two sources and nothing else: PTX, no -lto.
    let plan = LinkPlan::new(Arch::SM_90)
        .with_input(input("kernel.cu", KERNEL_CU.as_bytes()))
        .with_input(input("callee.cu", CALLEE_CU.as_bytes()));
    assert_eq!(plan.explain().unwrap().options(), ["-arch=sm_90"]);
    plan.link().unwrap();
}

/// `-ptx` only when every input carries LTOIR; then nvJitLink returns PTX.
#[test]
fn ptx_output_needs_ltoir_everywhere() {
    let f = fixtures();
    let mut plan = LinkPlan::new(Arch::SM_90)
        .with_input(input("kernel.ltoir", &f.kernel_ltoir))
        .with_input(input("callee.ltoir", &f.callee_ltoir));
    plan.output = LinkOutput::Ptx;
    assert_eq!(
        plan.explain().unwrap().options(),
        ["-arch=sm_90", "-lto", "-fma=0", "-ptx"]
    );
    let out = plan.link().unwrap();
    let ptx = describe("linked.ptx", &out.bytes).unwrap();
    assert_eq!(ptx.kind(), ItemKind::Ptx);
    assert!(
        ptx.root.facts.iter().any(|f| f == "kernels: kern"),
        "{:?}",
        ptx.root.facts
    );

    plan.inputs[1] = input("callee.ptx", &f.callee_ptx);
    match plan.explain() {
        Err(LinkError::PtxOutputNeedsLtoir { inputs }) => assert_eq!(inputs, ["callee.ptx (PTX)"]),
        other => panic!("expected PtxOutputNeedsLtoir, got {other:?}"),
    }
}

/// The reasons for the rules, measured on nvJitLink itself: `-lto -g` with
/// only PTX fails, and LTOIR without `-lto` fails.
#[test]
fn nvjitlink_rules_the_plan_avoids() {
    let f = fixtures();
    let complete = |options: &[&str], inputs: &[(InputType, &[u8], &str)]| {
        let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        let mut linker = Linker::new(&options)?;
        for (kind, bytes, name) in inputs {
            linker.add(*kind, bytes, name)?;
        }
        linker.complete()
    };
    let ptx_only = [
        (InputType::Ptx, f.kernel_ptx.as_slice(), "kernel.ptx"),
        (InputType::Ptx, f.callee_ptx.as_slice(), "callee.ptx"),
    ];
    let err = complete(&["-arch=sm_90", "-lto", "-g"], &ptx_only).unwrap_err();
    assert!(
        err.to_string().contains("NVVM_ERROR_NO_MODULE_IN_PROGRAM"),
        "{err}"
    );
    complete(&["-arch=sm_90", "-g"], &ptx_only).unwrap();

    let ltoir = [
        (InputType::Ltoir, f.kernel_ltoir.as_slice(), "kernel.ltoir"),
        (InputType::Ltoir, f.callee_ltoir.as_slice(), "callee.ltoir"),
    ];
    let err = complete(&["-arch=sm_90"], &ltoir).unwrap_err();
    assert!(err.to_string().contains("without LTO"), "{err}");
}

/// The trap: an LTOIR definition called only from PTX is dropped by LTO
/// (here the LTOIR also holds a kernel). The failure says why and how to fix.
#[test]
fn ltoir_callee_of_a_ptx_caller_is_explained() {
    let f = fixtures();
    let plan = LinkPlan::new(Arch::SM_90)
        .with_input(input("kernel.ptx", &f.kernel_ptx))
        .with_input(input(
            "callee_with_kernel.ltoir",
            &f.callee_with_kernel_ltoir,
        ));
    let err = plan.link().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("Undefined reference to 'callee'"), "{text}");
    assert!(
        text.contains("kernel.ptx (PTX, added as NVJITLINK_INPUT_PTX)"),
        "{text}"
    );
    let notes = err.notes();
    assert_eq!(notes.len(), 2, "{text}");
    assert!(
        notes[0].contains("non-LTO code [kernel.ptx (PTX)]"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("(here: callee)"), "{}", notes[0]);
    assert!(
        notes[1].starts_with("help: compile the caller to LTOIR too"),
        "{}",
        notes[1]
    );

    // The fix: the caller as LTOIR too.
    let plan = LinkPlan::new(Arch::SM_90)
        .with_input(input("kernel.ltoir", &f.kernel_ltoir))
        .with_input(input(
            "callee_with_kernel.ltoir",
            &f.callee_with_kernel_ltoir,
        ));
    plan.link().unwrap();
}

/// A failure with no PTX/LTOIR mix gets no trap note.
#[test]
fn unrelated_failures_get_no_trap_note() {
    let f = fixtures();
    let plan = LinkPlan::new(Arch::SM_90).with_input(input("kernel.ltoir", &f.kernel_ltoir));
    let err = plan.link().unwrap_err();
    assert!(err.notes().is_empty(), "{err}");
    assert!(err.to_string().contains("callee"), "{err}");
}

#[test]
fn truncated_ltoir_is_a_clear_error() {
    let f = fixtures();
    // Header cut: classification refuses it.
    let err = LinkInput::new("cut.ltoir", f.kernel_ltoir[..20].to_vec()).unwrap_err();
    assert!(err.message.contains("truncated LTOIR: 20 bytes"), "{err}");
    // Body cut: nvJitLink refuses it, naming the input.
    let half = f.kernel_ltoir.len() / 2;
    let plan = LinkPlan::new(Arch::SM_90)
        .with_input(input("cut.ltoir", &f.kernel_ltoir[..half]))
        .with_input(input("callee.ltoir", &f.callee_ltoir));
    let err = plan.link().unwrap_err();
    assert!(matches!(err, LinkError::Link(_)), "{err:?}");
    assert!(err.to_string().contains("cut.ltoir"), "{err}");
}

#[test]
fn inputs_without_device_code_are_refused() {
    let f = fixtures();
    let plan = LinkPlan::new(Arch::SM_90).with_input(input("host.o", &f.host_object));
    match plan.explain() {
        Err(LinkError::NoDeviceCode { input, kind }) => {
            assert_eq!(input, "host.o");
            assert_eq!(kind, ItemKind::HostObject);
        }
        other => panic!("expected NoDeviceCode, got {other:?}"),
    }
    assert!(matches!(
        LinkPlan::new(Arch::SM_90).explain(),
        Err(LinkError::NoInputs)
    ));
}

#[test]
fn explanation_renders_each_flag_with_its_reason() {
    let f = fixtures();
    let mut plan = LinkPlan::new(Arch::SM_90)
        .with_input(input("libkernel.a", &f.lto_library))
        .with_input(input("callee.cu", CALLEE_CU.as_bytes()));
    plan.debug = true;
    let text = plan.explain().unwrap().render();
    let nvrtc_include = backend_nvptx::nvidia::cccl_include_dir()
        .map(|d| format!(" -I{}", d.display()))
        .unwrap_or_default();
    let expected = format!(
        "nvJitLink options: -arch=sm_90 -lto -fma=0 -g
  -arch=sm_90  target architecture
  -lto         at least one input carries LTOIR: libkernel.a (libkernel.a › kernel_with_a_long_member_name_lto.o › __nv_relfatbin › entry 2); callee.cu (compiled to LTOIR)
  -fma=0       LTO must not contract floating-point multiply and add (Rust semantics): libkernel.a (libkernel.a › kernel_with_a_long_member_name_lto.o › __nv_relfatbin › entry 2); callee.cu (compiled to LTOIR)
  -g           debug information requested
inputs:
  libkernel.a (static library, added as NVJITLINK_INPUT_LIBRARY)
  callee.cu (CUDA source, NVRTC -arch=compute_90 -dlto -rdc=true -G{nvrtc_include}, added as NVJITLINK_INPUT_LTOIR)
"
    );
    assert_eq!(text, expected);
    plan.link().unwrap();
}
