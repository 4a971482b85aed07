//! Prints a sample provider instantiation (one callback with two captures,
//! its C++ twin, an empty-environment callback and the copy kernel).
//! `cargo run -p manifest --example emit_sample > sample.cu`

use manifest::provider::{emit_translation_unit, KernelRequest};
use manifest::{EnvLayout, LaunchFacts, RegistrationId, Scalar, Variant};

fn main() {
    let env = match EnvLayout::from_captures(&[("k", Scalar::I32), ("m", Scalar::I64)]) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("emit_sample: {e}");
            std::process::exit(1);
        }
    };
    let requests = [
        KernelRequest::ReduceWithThunk {
            registration: RegistrationId(0),
            variant: Variant::RustLtoir,
            thunk: "rcb_thunk_r0".into(),
            env: env.clone(),
        },
        KernelRequest::ReduceWithCpp {
            registration: RegistrationId(0),
            expr: "a + b".into(),
            env,
        },
        KernelRequest::ReduceWithThunk {
            registration: RegistrationId(1),
            variant: Variant::RustLtoir,
            thunk: "rcb_thunk_r1".into(),
            env: EnvLayout::empty(),
        },
        KernelRequest::Copy,
    ];
    match emit_translation_unit(&requests, &LaunchFacts::DEFAULT) {
        Ok(tu) => print!("{}", tu.source),
        Err(e) => {
            eprintln!("emit_sample: {e}");
            std::process::exit(1);
        }
    }
}
