//! Writing artifacts without ever destroying what is not ours.
//!
//! - A regular file is written to a temporary name beside the target, then
//!   renamed, so a failure never leaves a half-written file.
//! - A device, FIFO or socket is written through, never replaced: `-o
//!   /dev/null` must not turn `/dev/null` into a regular file.
//! - A symbolic link is followed: its target is written, the link stays.
//! - A build folder replaces an existing folder only if that folder is
//!   recognisably an earlier build output (a `manifest.json` of ours and
//!   nothing but the files a build writes), or empty.
//!
//! Temporary names are short (`.rmir-PID-N.tmp`), whatever the target's
//! name, so that a valid 255-byte name stays valid; they are registered so
//! that SIGINT or SIGTERM removes them.

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use frontend::scratch::{register_path, unregister_path};

/// A temporary name in `dir`, registered for removal on a signal.
struct Temp(PathBuf);

/// The PID in a temporary name `.rmir-PID-N.tmp`, if it is one.
fn temp_pid(name: &str) -> Option<u32> {
    let (pid, n) = name
        .strip_prefix(".rmir-")?
        .strip_suffix(".tmp")?
        .split_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

impl Temp {
    fn new(dir: &Path) -> Temp {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        // Temporaries of runs killed outright (SIGKILL) are removed here,
        // the next time something is written beside them.
        frontend::scratch::remove_dead(dir, temp_pid);
        let path = dir.join(format!(
            ".rmir-{}-{}.tmp",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        register_path(&path);
        Temp(path)
    }

    /// The temporary now has its final name: nothing to clean up.
    fn done(self) {
        unregister_path(&self.0);
        std::mem::forget(self);
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = match std::fs::symlink_metadata(&self.0) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&self.0),
            Ok(_) => std::fs::remove_file(&self.0),
            Err(_) => Ok(()),
        };
        unregister_path(&self.0);
    }
}

/// Follows symbolic links to the path that is really written (which may
/// not exist yet).
fn resolve_links(path: &Path) -> Result<PathBuf, String> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)
                    .map_err(|e| format!("cannot read link {}: {e}", p.display()))?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(format!(
        "{}: too many levels of symbolic links",
        path.display()
    ))
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `bytes` to `path` (see the module documentation).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let target = resolve_links(path)?;
    let existing = std::fs::metadata(&target).ok();
    if let Some(m) = &existing {
        let t = m.file_type();
        if t.is_dir() {
            return Err(format!("cannot write {}: it is a folder", path.display()));
        }
        if t.is_fifo() || t.is_char_device() || t.is_block_device() || t.is_socket() {
            // Written through: renaming over it would replace the device.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(fail)?;
            return f.write_all(bytes).and_then(|()| f.flush()).map_err(fail);
        }
    }
    if target.file_name().is_none() {
        return Err(format!("{}: not a file name", path.display()));
    }
    let tmp = Temp::new(parent(&target));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp.0)?;
        f.write_all(bytes)?;
        if let Some(m) = &existing {
            // Replacing a file keeps its permissions (an executable stays one).
            f.set_permissions(std::fs::Permissions::from_mode(m.permissions().mode()))?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp.0, &target)
    })();
    result.map_err(fail)?;
    tmp.done();
    Ok(())
}

/// The file names a build writes into its folder.
fn is_build_file(name: &str) -> bool {
    let stem_ok = |stem: &str, base: &str| {
        stem == base
            || stem
                .strip_prefix(base)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if name == "manifest.json" || name == "bundle.json" {
        return true;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    match ext {
        "cubin" | "mlir" | "ll" => stem_ok(stem, "callbacks"),
        "ptx" | "ltoir" => stem_ok(stem, "thunks") || stem_ok(stem, "provider"),
        "cu" => stem_ok(stem, "provider"),
        _ => false,
    }
}

/// Why `dir` is not a folder a build may replace, if it is not.
fn not_replaceable(dir: &Path) -> Option<String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return Some(format!("it cannot be read: {e}")),
    };
    let mut names = Vec::new();
    let mut strays = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else {
            return Some("it cannot be read".into());
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let file = entry.file_type().is_ok_and(|t| t.is_file());
        if !file || !is_build_file(&name) {
            strays.push(name.clone());
        }
        names.push(name);
    }
    if names.is_empty() {
        return None;
    }
    let ours = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["format"] == manifest::MANIFEST_FORMAT);
    if !ours {
        return Some("it is not the output of a build (it has no manifest.json of ours)".into());
    }
    if !strays.is_empty() {
        strays.sort();
        return Some(format!(
            "it holds files a build did not write: {}",
            strays.join(", ")
        ));
    }
    None
}

/// Checks that a build may write the folder `dir` (absent, empty, or an
/// earlier build output); returns the path really written (links followed)
/// and whether it exists. Called before a build starts, so a refusal costs
/// nothing, and again when writing.
pub fn check_dir(dir: &Path) -> Result<(PathBuf, bool), String> {
    let target = resolve_links(dir)?;
    if target.file_name().is_none() {
        return Err(format!("{}: not a folder name", dir.display()));
    }
    let Ok(m) = std::fs::symlink_metadata(&target) else {
        return Ok((target, false));
    };
    if !m.is_dir() {
        return Err(format!(
            "{} exists and is not a folder: choose another -o",
            dir.display()
        ));
    }
    if let Some(why) = not_replaceable(&target) {
        return Err(format!(
            "{} exists and {why}; it is left untouched: choose another -o, or remove it",
            dir.display()
        ));
    }
    Ok((target, true))
}

/// Writes `files` into a fresh folder beside `dir`, then puts it in place of
/// `dir`, which must be absent, empty, or an earlier build output.
pub fn replace_dir(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    let (target, exists) = check_dir(dir)?;
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", dir.display());
    // Missing parent folders are created, as `mkdir -p` would.
    std::fs::create_dir_all(parent(&target)).map_err(fail)?;
    let tmp = Temp::new(parent(&target));
    (|| -> std::io::Result<()> {
        std::fs::create_dir(&tmp.0)?;
        for (f, bytes) in files {
            std::fs::write(tmp.0.join(f), bytes)?;
        }
        Ok(())
    })()
    .map_err(fail)?;
    if exists {
        // The old output moves aside first, so that a failed rename leaves it whole.
        let old = Temp::new(parent(&target));
        std::fs::rename(&target, &old.0).map_err(fail)?;
        if let Err(e) = std::fs::rename(&tmp.0, &target) {
            let _ = std::fs::rename(&old.0, &target);
            return Err(fail(e));
        }
        drop(old);
    } else {
        std::fs::rename(&tmp.0, &target).map_err(fail)?;
    }
    tmp.done();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{is_build_file, temp_pid};

    #[test]
    fn temporary_names_are_recognised_exactly() {
        assert_eq!(temp_pid(".rmir-123-0.tmp"), Some(123));
        assert_eq!(temp_pid(".rmir-9-17.tmp"), Some(9));
        for other in [
            ".rmir-123.tmp",
            ".rmir-x-0.tmp",
            ".rmir-1-0.tmp.bak",
            "rmir-1-0.tmp",
            ".rmir-1-.tmp",
        ] {
            assert_eq!(temp_pid(other), None, "{other}");
        }
    }

    #[test]
    fn build_files_are_recognised_by_name() {
        for ours in [
            "manifest.json",
            "bundle.json",
            "callbacks.cubin",
            "callbacks.12.cubin",
            "callbacks.0.mlir",
            "callbacks.3.ll",
            "thunks.0.ptx",
            "thunks.1.ltoir",
            "provider.ltoir",
            "provider.2.cu",
        ] {
            assert!(is_build_file(ours), "{ours}");
        }
        for theirs in [
            "w.rs",
            "notes.txt",
            "callbacks.x.cubin",
            "callbacks..cubin",
            "thunks.cu",
            "manifest.json.bak",
            "provider",
        ] {
            assert!(!is_build_file(theirs), "{theirs}");
        }
    }
}
