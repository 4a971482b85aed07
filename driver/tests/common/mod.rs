//! Shared by the driver's integration tests. Each test crate uses a part of
//! it, so what one of them leaves unused is not dead code.
#![allow(dead_code)]

pub mod gen;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The repository's root (the driver crate's parent folder).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A tool of the project's NVIDIA wheels (`cuobjdump`, `nvdisasm`).
pub fn tool(name: &str) -> PathBuf {
    let p = root().join(".nvidia/nvidia/cu13/bin").join(name);
    assert!(p.exists(), "{} missing: run scripts/setup.sh", p.display());
    p
}

/// Whether any kernel of the cubin calls another function: a `CALL.ABS`
/// (relocated, to a function of another input) or a `CALL` to a named
/// function. A `CALL.REL` to an address inside the kernel is a subroutine
/// ptxas made of one instruction (an IEEE division's slow path, a 64-bit
/// remainder), not a call the source has.
pub fn has_call(cubin: &Path) -> bool {
    let out = std::process::Command::new(tool("cuobjdump"))
        .arg("-sass")
        .arg(cubin)
        .output()
        .expect("cuobjdump runs");
    assert!(out.status.success(), "cuobjdump {}", cubin.display());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Function : "),
        "no SASS in {}",
        cubin.display()
    );
    text.lines().any(|l| {
        let mut words = l.split_whitespace();
        words.any(|w| w.starts_with("CALL.ABS")) || (l.contains("CALL") && l.contains('`'))
    })
}

/// Runs the driver from the repository root with the build cache off.
pub fn driver_uncached(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_driver"))
        .current_dir(root())
        .env("RMIR_CACHE", "off")
        .args(args)
        .output()
        .expect("driver runs")
}

/// A fresh, empty folder `rmir-KIND-NAME-PID` under the temporary folder.
pub fn scratch(kind: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rmir-{kind}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `work(worker, job)` for every job on two threads (the machine's two
/// cores), each job taken once, in order; `worker` (0 or 1) names a scratch
/// folder of the thread's own.
pub fn on_two_workers<T: Sync>(jobs: &[T], work: impl Fn(usize, &T) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (next, work) = (&next, &work);
            s.spawn(move || {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    work(w, job);
                }
            });
        }
    });
}
