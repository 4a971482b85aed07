// Included by the targets that link LLVM and MLIR statically.
//
// Debian's `libMLIRMlirOptMain.a` holds mlir-opt's own `main`, and mlir-sys
// links every MLIR archive ahead of libFuzzer's: with `#![no_main]` alone
// the linker takes mlir-opt's `main`, which reads libFuzzer's flags as
// mlir-opt options and exits. Defining `main` here, in the binary itself,
// keeps both archive mains out; it hands over to libFuzzer's driver.

use std::os::raw::{c_char, c_int};

extern "C" {
    fn LLVMFuzzerRunDriver(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        callback: unsafe extern "C" fn(*const u8, usize) -> c_int,
    ) -> c_int;
    // Defined by libfuzzer-sys; calls the `fuzz_target!` body.
    fn LLVMFuzzerTestOneInput(data: *const u8, size: usize) -> c_int;
}

#[no_mangle]
pub extern "C" fn main(mut argc: c_int, mut argv: *mut *mut c_char) -> c_int {
    // SAFETY: argc/argv are the process's own, passed on unchanged.
    unsafe { LLVMFuzzerRunDriver(&mut argc, &mut argv, LLVMFuzzerTestOneInput) }
}
