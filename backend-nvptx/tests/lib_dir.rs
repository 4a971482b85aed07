//! `NVIDIA_LIB_DIR`, read once at the edge into the process's toolchain,
//! is where the NVIDIA libraries and libdevice are looked for first.

use backend_nvptx::nvidia::{candidate_paths, NvidiaLibrary};
use frontend::toolchain::{configure, Toolchain};

#[test]
fn the_configured_folder_is_searched_first() {
    let dir = std::env::temp_dir().join("rmir-nvidia-lib-dir");
    configure(Toolchain {
        nvidia_lib_dir: Some(dir.clone()),
        ..Toolchain::from_env()
    })
    .expect("nothing configured the toolchain before this test");
    for library in [
        NvidiaLibrary::Nvrtc,
        NvidiaLibrary::NvJitLink,
        NvidiaLibrary::Nvvm,
    ] {
        let paths = candidate_paths(library);
        assert_eq!(paths[0], dir.join(library.file_name()), "{library:?}");
        assert!(paths.len() > 1, "the wheel and system folders follow");
    }
}
