//! The instantiation text compiles with NVRTC, as the backend compiles it
//! (LTOIR with -dlto, PTX without), including every scalar layout.

use manifest::provider::{emit_translation_unit, KernelRequest};
use manifest::{EnvLayout, LaunchFacts, RegistrationId, Scalar, Variant};
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

fn every_scalar_env() -> EnvLayout {
    let mut captures: Vec<(String, Scalar)> = Vec::new();
    for (i, s) in Scalar::ALL.iter().enumerate() {
        captures.push((format!("c{i}"), *s));
        captures.push((format!("p{i}"), Scalar::U8));
    }
    EnvLayout::from_captures(&captures).unwrap()
}

fn requests() -> Vec<KernelRequest> {
    let env = every_scalar_env();
    vec![
        KernelRequest::ReduceWithThunk {
            registration: RegistrationId(0),
            variant: Variant::RustLtoir,
            thunk: "rcb_thunk_r0".into(),
            env: env.clone(),
        },
        KernelRequest::ReduceWithCpp {
            registration: RegistrationId(0),
            expr: "a + b + (int)env.c2".into(),
            env,
        },
        KernelRequest::ReduceWithThunk {
            registration: RegistrationId(1),
            variant: Variant::RustPtx,
            thunk: "rcb_thunk_r1".into(),
            env: EnvLayout::empty(),
        },
        KernelRequest::Copy,
    ]
}

#[test]
fn nvrtc_compiles_instantiations_to_ltoir_and_ptx() {
    let tu = emit_translation_unit(&requests(), &LaunchFacts::DEFAULT).unwrap();
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
    let plain = emit_translation_unit(&[KernelRequest::Copy], &LaunchFacts::DEFAULT).unwrap();
    assert!(plain.nvrtc_options.is_empty());
    compile(&plain.source, &["-arch=sm_90", "-rdc=true", "-dlto"])
        .unwrap_or_else(|log| panic!("{log}"));
}

#[test]
fn nvrtc_rejects_a_layout_the_compiler_disagrees_with() {
    let tu = emit_translation_unit(&requests(), &LaunchFacts::DEFAULT).unwrap();
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
