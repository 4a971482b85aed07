//! No input makes `driver inspect` or `driver link` die (issue 9): real
//! device code built by the test (the cubin and the LTOIR of a build of
//! `examples/quickstart.rs`), damaged the ways that crashed nvJitLink 13.0
//! (SIGSEGV: `e_shoff = 0`, LTOIR header offset 0xffffffff, bytes appended
//! to a cubin, one bit flipped in LTOIR; SIGFPE: `sh_entsize = 0`), plus
//! seeded bit flips and zeroed header fields. Every run must exit 0 or 1:
//! never a signal, never a panic (101).

use std::path::{Path, PathBuf};
use std::process::Command;

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
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn put(bytes: &mut [u8], at: usize, value: &[u8]) {
    bytes[at..at + value.len()].copy_from_slice(value);
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

#[test]
fn damaged_device_code_never_kills_link_or_inspect() {
    let dir = std::env::temp_dir().join(format!("rmir-link-robust-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let driver = env!("CARGO_BIN_EXE_driver");
    let out = dir.join("build");
    let o = Command::new(driver)
        .args(["build", "examples/quickstart.rs", "--emit", "ltoir", "-o"])
        .arg(&out)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cubin = std::fs::read(out.join("callbacks.cubin")).unwrap();
    let provider = std::fs::read(out.join("provider.ltoir")).unwrap();
    let thunks = out.join("thunks.0.ltoir");
    assert!(thunks.is_file(), "no thunks.0.ltoir in {}", out.display());

    // The listed reproducers.
    let shoff = u64_at(&cubin, 40) as usize;
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut c = cubin.clone();
    put(&mut c, 40, &0u64.to_le_bytes());
    cases.push(("e_shoff_0.cubin".into(), c));
    let mut c = cubin.clone();
    put(&mut c, shoff + 3 * 64 + 56, &0u64.to_le_bytes());
    cases.push(("section3_entsize_0.cubin".into(), c));
    let mut c = cubin.clone();
    c.extend_from_slice(&[0xAB; 24]);
    cases.push(("appended.cubin".into(), c));
    let mut l = provider.clone();
    put(&mut l, 16, &u32::MAX.to_le_bytes());
    cases.push(("offset16_ffffffff.ltoir".into(), l));
    // Every section's entry size zeroed, one at a time.
    let shnum = u16::from_le_bytes([cubin[60], cubin[61]]) as usize;
    for s in 0..shnum {
        let mut c = cubin.clone();
        put(&mut c, shoff + s * 64 + 56, &0u64.to_le_bytes());
        cases.push((format!("section{s}_entsize_0.cubin"), c));
    }
    // Zeroed header fields: each 4-byte word of the ELF header and of the
    // first 40 bytes of the LTOIR header.
    for at in (0..64).step_by(4) {
        let mut c = cubin.clone();
        put(&mut c, at, &[0; 4]);
        cases.push((format!("zero{at}.cubin"), c));
    }
    for at in (0..40).step_by(4) {
        let mut l = provider.clone();
        put(&mut l, at, &[0; 4]);
        cases.push((format!("zero{at}.ltoir"), l));
    }
    // Seeded bit flips.
    let mut rng = Rng(0x5EED_0009_11AC_0001);
    for n in 0..24 {
        let (base, ext) = if n % 2 == 0 {
            (&cubin, "cubin")
        } else {
            (&provider, "ltoir")
        };
        let mut b = base.clone();
        let at = rng.below(b.len());
        b[at] ^= 1 << rng.below(8);
        cases.push((format!("flip{n}_at{at}.{ext}"), b));
    }

    let listed = 4;
    let mut outcomes = [0usize; 2];
    for (n, (name, bytes)) in cases.iter().enumerate() {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let mut runs = vec![vec!["inspect".to_string(), file.display().to_string()]];
        let mut link = vec!["link".to_string(), file.display().to_string()];
        if name.ends_with(".ltoir") {
            link.push(thunks.display().to_string());
        }
        link.extend([
            "-o".to_string(),
            dir.join("out.cubin").display().to_string(),
        ]);
        runs.push(link);
        for args in runs {
            let o = Command::new(driver).args(&args).output().unwrap();
            // The listed reproducers are refused by validation, so even
            // `inspect` says so.
            if n < listed {
                assert_eq!(
                    o.status.code(),
                    Some(1),
                    "{name}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            match o.status.code() {
                Some(c @ (0 | 1)) => outcomes[c as usize] += 1,
                other => panic!(
                    "`driver {}` ended with {other:?} (kept in {}):\n{}",
                    args.join(" "),
                    dir.display(),
                    String::from_utf8_lossy(&o.stderr)
                ),
            }
        }
    }
    // Both outcomes occur: some damage is harmless, most is refused.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// nvJitLink prints `Multiple definition` and still returns a cubin: the
/// link fails (exit 1, nothing written) and the error names the real inputs.
#[test]
fn duplicate_definitions_fail_the_link() {
    let dir = std::env::temp_dir().join(format!("rmir-link-dup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let callee = "extern \"C\" __device__ int callee(int a) { return a * 3; }\n";
    let kernel = "extern \"C\" __device__ int callee(int a);\n\
                  extern \"C\" __global__ void kern(int *p) { p[0] = callee(p[1]); }\n";
    std::fs::write(dir.join("kernel.cu"), kernel).unwrap();
    std::fs::write(dir.join("callee.cu"), callee).unwrap();
    std::fs::write(dir.join("again.cu"), callee).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_driver"))
        .args([
            "link",
            "kernel.cu",
            "callee.cu",
            "again.cu",
            "-o",
            "x.cubin",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Multiple definition of 'callee' in 'again.cu'"),
        "{stderr}"
    );
    assert!(!dir.join("x.cubin").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
