//! rustc's MIR text → prepared MIR (parse, prepare, validate). Never a
//! panic; and every document the parser accepts is one the reader accepts
//! and reads back unchanged.
#![no_main]

use frontend::bridge::import_mir_text;
use frontend::PreparedMir;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(doc) = import_mir_text("fuzz.mir", text) {
        let json = doc.to_json();
        match PreparedMir::from_json(&json) {
            Ok(back) => assert_eq!(back.to_json(), json, "the document changed on read"),
            Err(e) => panic!("the parser wrote a document the reader refuses: {e}"),
        }
    }
});
