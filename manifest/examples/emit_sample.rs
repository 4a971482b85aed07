//! Prints a sample provider instantiation: for each provider (or the one
//! named), a callback with two captures over `i32` elements and its C++
//! twin, then the copy kernel.
//! `cargo run -p manifest --example emit_sample [PROVIDER] > sample.cu`

use manifest::provider::{emit_translation_unit, KernelRequest, Operation};
use manifest::{EnvLayout, Provider, RegistrationId, Scalar, Shape, Signature, Variant};

fn main() {
    let only = std::env::args().nth(1);
    let providers: Vec<Provider> = match &only {
        Some(name) => match Provider::parse(name) {
            Ok(p) => vec![p],
            Err(e) => {
                eprintln!("emit_sample: {e}");
                std::process::exit(2);
            }
        },
        None => Provider::ALL.to_vec(),
    };
    let env = match EnvLayout::from_captures(&[("k", Scalar::I32), ("m", Scalar::I64)]) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("emit_sample: {e}");
            std::process::exit(1);
        }
    };
    let mut requests = Vec::new();
    for (i, provider) in providers.into_iter().enumerate() {
        let t = Scalar::I32;
        let (signature, expr) = match provider.shape() {
            Shape::Fold => (Signature::fold(t), "a + b"),
            Shape::Map => (Signature::scalars(&[t], t), "3 * a + 1"),
            Shape::Zip => (Signature::scalars(&[t, t], t), "a * env.k + b"),
            Shape::Predicate | Shape::RefPredicate => {
                (Signature::scalars(&[t], Scalar::Bool), "a > env.k")
            }
            Shape::Compare | Shape::Key => (Signature::scalars(&[t, t], Scalar::Bool), "a < b"),
            Shape::Same => (Signature::scalars(&[t, t], Scalar::Bool), "a == b"),
            Shape::Probe => (Signature::scalars(&[t, Scalar::I64], Scalar::Bool), "a < b"),
            Shape::Bin => (
                Signature::scalars(&[t], Scalar::Usize),
                "(unsigned)a % 256u",
            ),
            // The C++ operation is the combine: a fold, or whether the later
            // value `b` wins over the earlier `a` (here: the first minimum).
            Shape::Chain if provider == Provider::ChainPick => {
                (Signature::scalars(&[t], Scalar::I64), "b < a")
            }
            // A collect's C++ operation is its test of an element `a`.
            Shape::Chain if provider == Provider::ChainCollect => {
                (Signature::scalars(&[t], Scalar::I64), "a > env.k")
            }
            Shape::Chain => (Signature::scalars(&[t], Scalar::I64), "a + b"),
            // A by-key's C++ operation is its fold of values; its keys run
            // as `==` finds them.
            Shape::ByKey => (Shape::ByKey.signature(t, Scalar::I64), "a + b"),
        };
        let registration = RegistrationId(i as u32);
        for op in [
            Operation::Thunk {
                symbol: format!("rcb_thunk_r{i}"),
                variant: Variant::RustLtoir,
            },
            Operation::Cpp { expr: expr.into() },
        ] {
            requests.push(KernelRequest::Callback {
                provider,
                registration,
                signature: signature.clone(),
                op,
                env: env.clone(),
                ties: manifest::Ties::ByPosition,
            });
        }
    }
    requests.push(KernelRequest::Copy);
    match emit_translation_unit(&requests) {
        Ok(tu) => print!("{}", tu.source),
        Err(e) => {
            eprintln!("emit_sample: {e}");
            std::process::exit(1);
        }
    }
}
