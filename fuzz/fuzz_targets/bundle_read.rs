//! The run bundle reader (`bundle.json`), with its validation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use manifest::bundle::Bundle;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(b) = Bundle::from_json(text) {
        for r in &b.registrations {
            let _ = b.captures(r.registration);
        }
        let _ = b.to_json();
    }
});
