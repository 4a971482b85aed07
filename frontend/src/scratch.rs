//! Process hygiene shared by everything that runs rustc: scratch folders,
//! child processes with a time limit, and a registry of both so that a signal
//! handler can clean up before the process ends.
//!
//! Scratch folders are named `rmir-KIND-PID-…` in the temporary folder. A
//! process killed outright (SIGKILL) cannot clean up, so
//! [`remove_stale`] removes the scratch of processes that no longer exist; it
//! is called when the driver starts.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that bounds every rustc run (and the host
/// harness), in seconds.
pub use crate::toolchain::TIMEOUT_VAR;

/// Prefixes of our scratch folder names; [`remove_stale`] touches no others.
const KINDS: [&str; 6] = ["bridge", "hostref", "layout", "cargo", "core-model", "lint"];

/// What is alive now and must not outlive the process.
struct Live {
    paths: Vec<PathBuf>,
    children: Vec<u32>,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    paths: Vec::new(),
    children: Vec::new(),
});

fn live() -> std::sync::MutexGuard<'static, Live> {
    // A panic while the lock was held leaves the lists usable.
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a file or folder to remove if the process is interrupted.
pub fn register_path(path: &Path) {
    live().paths.push(path.to_path_buf());
}

/// Forgets a path registered with [`register_path`] (it was renamed or removed).
pub fn unregister_path(path: &Path) {
    live().paths.retain(|p| p != path);
}

/// For a signal handler: ends every running child and removes every
/// registered path. Safe to call from any thread; the process should exit
/// right after.
pub fn cleanup_now() {
    let live = live();
    for &pid in &live.children {
        // SAFETY: kill(2) with a pid we spawned and have not yet reaped
        // (children are unregistered before they are waited for to the end).
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    }
    for p in &live.paths {
        let _ = match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
            Ok(_) => std::fs::remove_file(p),
            Err(_) => Ok(()),
        };
    }
}

/// A private scratch folder, `rmir-KIND-PID-NANOS-N`, removed on drop (and
/// by [`cleanup_now`] on a signal).
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(kind: &str) -> Result<Scratch, String> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        debug_assert!(KINDS.contains(&kind));
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "rmir-{kind}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        // Registered before it exists: a signal between the two leaves nothing.
        register_path(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            unregister_path(&dir);
            return Err(format!("cannot create {}: {e}", dir.display()));
        }
        Ok(Scratch(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        unregister_path(&self.0);
    }
}

/// Removes scratch folders left by processes that no longer exist (killed
/// by SIGKILL, say). Only folders named like ours, owned by this user,
/// whose PID is not a running process, are removed.
pub fn remove_stale() {
    remove_dead(&std::env::temp_dir(), stale_pid);
}

/// Removes the entries of `dir` that `pid_of` reads a PID from, when that
/// process no longer exists and the entry belongs to this user.
pub fn remove_dead(dir: &Path, pid_of: impl Fn(&str) -> Option<u32>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    // SAFETY: geteuid(2) cannot fail.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = pid_of(name) else { continue };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = entry.metadata() else { continue };
        if m.uid() != me {
            continue;
        }
        let _ = if m.is_dir() {
            std::fs::remove_dir_all(entry.path())
        } else {
            std::fs::remove_file(entry.path())
        };
    }
}

/// The PID in a scratch folder name `rmir-KIND-PID-…`, if it is one.
fn stale_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("rmir-")?;
    let rest = KINDS
        .iter()
        .find_map(|k| rest.strip_prefix(k)?.strip_prefix('-'))?;
    let (pid, tail) = rest.split_once('-')?;
    if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return None;
    }
    pid.parse().ok()
}

/// How rustc, running in a scratch folder, names the user's `file`: the
/// path to pass, and a `--remap-path-prefix` that makes rustc print the path
/// as the user gave it (in MIR closure names and in diagnostics).
///
/// A relative path is reached through a link to `/proc/PID/cwd`, our working
/// directory, so that it works from any working directory: one whose name
/// is not UTF-8 (rustc cannot take it) or one deeper than `PATH_MAX` (where
/// rustc, run there, never ends).
pub fn rustc_input(file: &Path, scratch: &Scratch) -> Result<(PathBuf, Option<String>), String> {
    let utf8 = |p: &Path| {
        p.to_str().map(str::to_string).ok_or_else(|| {
            format!(
                "{}: the path is not valid UTF-8, and rustc takes UTF-8 paths only: rename it",
                p.display()
            )
        })
    };
    utf8(file)?;
    if file.is_absolute() {
        return Ok((file.to_path_buf(), None));
    }
    let link = scratch.join("cwd");
    if !link.exists() {
        std::os::unix::fs::symlink(format!("/proc/{}/cwd", std::process::id()), &link)
            .map_err(|e| format!("cannot create {}: {e}", link.display()))?;
    }
    let prefix = format!("{}/=", utf8(&link)?);
    Ok((link.join(file), Some(prefix)))
}

/// The time limit of one rustc run ([`crate::toolchain::Toolchain::rustc_timeout`]).
pub fn timeout() -> Result<Duration, String> {
    crate::toolchain::get().rustc_timeout.clone()
}

/// What a finished child left.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a child did not finish.
#[derive(Debug)]
pub enum RunError {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It ran past the limit and was killed.
    Timeout(Duration),
}

/// Runs `cmd` to the end with its output captured and no standard input,
/// killed after `limit`. The child is registered for [`cleanup_now`] while it
/// runs.
pub fn run(cmd: &mut Command, limit: Duration) -> Result<Finished, RunError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(RunError::Spawn)?;
    live().children.push(child.id());
    // Both pipes are drained while the child runs: a full pipe would block it.
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = wait(&mut child, limit);
    live().children.retain(|&p| p != child.id());
    let status = match status {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::Timeout(limit));
        }
    };
    Ok(Finished {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child` up to `limit`; `None` when it is still running.
fn wait(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            // The child cannot be waited for: treat as still running, the
            // limit will end it.
            Err(_) => {}
        }
        let elapsed = start.elapsed();
        if elapsed >= limit {
            return None;
        }
        std::thread::sleep(pause.min(limit - elapsed));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_names_are_recognised_exactly() {
        assert_eq!(stale_pid("rmir-bridge-123-456-0"), Some(123));
        assert_eq!(stale_pid("rmir-hostref-9-1"), Some(9));
        assert_eq!(stale_pid("rmir-layout-7-8-0"), Some(7));
        for other in [
            "rmir-bridge-123",
            "rmir-cli-x-123",
            "rmir-bridge-abc-1",
            "rmir-bridge-1-x",
            "bridge-1-2",
            "rmir-hostref-1-2.txt",
        ] {
            assert_eq!(stale_pid(other), None, "{other}");
        }
    }

    #[test]
    fn a_child_past_its_limit_is_killed() {
        let start = Instant::now();
        let r = run(Command::new("sleep").arg("30"), Duration::from_millis(200));
        assert!(matches!(r, Err(RunError::Timeout(_))), "{r:?}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn output_is_captured() {
        let r = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(r.status.code(), Some(3));
        assert_eq!(r.stdout, b"out\n");
        assert_eq!(r.stderr, b"err\n");
    }

    #[test]
    fn scratch_is_removed_on_drop_and_unregistered() {
        let s = Scratch::new("bridge").unwrap();
        let p = s.path().to_path_buf();
        assert!(p.is_dir());
        assert!(live().paths.contains(&p));
        drop(s);
        assert!(!p.exists());
        assert!(!live().paths.contains(&p));
    }
}
