//! `.mlir` text through the parse entry `driver opt` uses (MLIR's parser,
//! with the `rmir` dialect loaded), then the `rmir` verifier.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("llvm_main.rs");

thread_local! {
    // Loading the dialects costs far more than one parse: once per process.
    static CONTEXT: melior::Context = ir::context().expect("the rmir dialect loads");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    CONTEXT.with(|context| {
        if let Ok(module) = ir::parse(context, text) {
            let _ = ir::verify(&module);
            let _ = ir::print(&module);
        }
    });
});
