//! The artifact manifest reader (`manifest.json`), with its validation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = Manifest::from_json(text) {
        // What validation accepts, every reader of a manifest may index.
        for k in &m.kernels {
            let _ = m.cubin_of(k);
            let _ = m.kernel_env(k);
        }
        let _ = m.cubins();
        let _ = m.to_json();
    }
});
