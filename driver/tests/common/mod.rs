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
