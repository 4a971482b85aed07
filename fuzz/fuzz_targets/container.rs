//! Container reading (`driver inspect`, `driver link`): PTX, LTOIR, cubin,
//! fatbin, host objects and static libraries, from any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("llvm_main.rs");

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = backend_nvptx::container::describe("fuzz.bin", data) {
        let _ = d.render();
        let _ = d.carries_ltoir();
        let _ = d.ltoir_paths();
    }
});
