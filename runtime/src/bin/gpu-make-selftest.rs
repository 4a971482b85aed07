//! `gpu-make-selftest OUT_DIR [--max-size N]` writes a selftest bundle
//! (selftest.cu, manifest.json, bundle.json); compile selftest.cu to
//! OUT_DIR/selftest.cubin with `nvcc -arch=sm_90 -cubin` (scripts/gpu/selftest.sh
//! does all of it), then `gpu-run OUT_DIR` on the GPU machine.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut dir = None;
    let mut max_size = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--max-size" => match args.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(n) => max_size = Some(n),
                None => {
                    eprintln!("gpu-make-selftest: --max-size takes a number");
                    return ExitCode::from(2);
                }
            },
            flag if flag.starts_with('-') => {
                eprintln!("usage: gpu-make-selftest OUT_DIR [--max-size N]");
                return ExitCode::from(2);
            }
            path => dir = Some(PathBuf::from(path)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: gpu-make-selftest OUT_DIR [--max-size N]");
        return ExitCode::from(2);
    };
    let selftest = match runtime::selftest::make_selftest(max_size) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gpu-make-selftest: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("gpu-make-selftest: {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    for (name, text) in &selftest.files {
        // Temp name, then rename: no half-written file is left behind.
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.tmp"));
        if let Err(e) = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &path)) {
            eprintln!("gpu-make-selftest: {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    println!("wrote {} files to {}", selftest.files.len(), dir.display());
    ExitCode::SUCCESS
}
