//! Bad prepared MIR never crashes the compiler: real documents, mutated at
//! random (numbers shifted, strings replaced, list entries dropped or
//! duplicated), go through `driver admit` and `driver build`. Each must end
//! with exit 0 or 1, never a panic or an abort. (This found a panic in
//! melior's `StringAttribute::value` on empty strings.)

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn mutate(v: &Value, rng: &mut Rng) -> Value {
    const RATE: u64 = 30;
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), mutate(v, rng))).collect())
        }
        Value::Array(a) => {
            let mut a: Vec<Value> = a.iter().map(|v| mutate(v, rng)).collect();
            if !a.is_empty() && rng.chance(RATE) {
                let i = rng.below(a.len());
                if rng.chance(500) {
                    a.remove(i);
                } else {
                    let copy = a[rng.below(a.len())].clone();
                    a.insert(i, copy);
                }
            }
            Value::Array(a)
        }
        Value::Bool(b) if rng.chance(RATE) => Value::Bool(!b),
        Value::Number(n) if rng.chance(RATE) => {
            let delta = [-1i64, 1, 7, 1000][rng.below(4)];
            Value::from(n.as_i64().unwrap_or(0).wrapping_add(delta))
        }
        Value::String(s) if rng.chance(RATE / 3) => {
            let pick = ["", "i64", "&i32", "_99", "bb9", "{closure@x.rs:1:1: 1:2}"];
            let r = rng.below(pick.len() + 1);
            Value::String(
                pick.get(r)
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| s.chars().rev().collect()),
            )
        }
        other => other.clone(),
    }
}

#[test]
fn mutated_prepared_mir_never_crashes() {
    let dir = std::env::temp_dir().join(format!("rmir-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let driver = env!("CARGO_BIN_EXE_driver");
    let mut docs = Vec::new();
    for case in [
        "07_core_scalar_methods",
        "16_cuda_call_chain",
        "04_mixed_scalar_captures",
    ] {
        let out = dir.join(format!("{case}.pmir.json"));
        let o = Command::new(driver)
            .args(["import", &format!("tests/admission/{case}.rs"), "-o"])
            .arg(&out)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        docs.push(serde_json::from_slice::<Value>(&std::fs::read(&out).unwrap()).unwrap());
    }
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let file = dir.join("mutated.pmir.json");
    let mut outcomes = [0usize; 2];
    for n in 0..160 {
        let doc = mutate(&docs[rng.below(docs.len())], &mut rng);
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        // Every run admits; one in eight also builds (NVRTC and nvJitLink are slower).
        let mut runs = vec![vec!["admit".to_string()]];
        if n % 8 == 0 {
            runs.push(vec![
                "build".into(),
                "-o".into(),
                dir.join("out").display().to_string(),
            ]);
        }
        for args in runs {
            let o = Command::new(driver)
                .arg(&args[0])
                .arg(&file)
                .args(&args[1..])
                .output()
                .unwrap();
            match o.status.code() {
                Some(c @ (0 | 1)) => outcomes[c as usize] += 1,
                other => {
                    let keep = dir.join(format!("crash{n}.pmir.json"));
                    std::fs::copy(&file, &keep).unwrap();
                    panic!(
                        "`driver {}` on {} ended with {other:?}:\n{}",
                        args[0],
                        keep.display(),
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
            }
        }
    }
    // Both outcomes occur: the mutations are neither all harmless nor all fatal.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
