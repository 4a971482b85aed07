//! The `.pmir.json` reader: format check, schema, validation. What it
//! accepts must be safe to index: the summary walks every body.
#![no_main]

use frontend::PreparedMir;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(doc) = PreparedMir::from_json(text) {
        let _ = frontend::summary::summary(&doc);
        let _ = doc.to_json();
    }
});
