//! `.pmir.json` as `driver admit`, `opt` and `build` read it: the reader,
//! then the importer into the `rmir` dialect and its verifier. A document
//! the reader accepts must never make the importer index out of bounds.
#![no_main]

use frontend::PreparedMir;
use libfuzzer_sys::fuzz_target;

include!("llvm_main.rs");

thread_local! {
    static CONTEXT: melior::Context = ir::context().expect("the rmir dialect loads");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = PreparedMir::from_json(text) else {
        return;
    };
    CONTEXT.with(|context| {
        if let Ok(module) = ir::import(context, &doc) {
            let _ = ir::verify(&module);
        }
    });
});
