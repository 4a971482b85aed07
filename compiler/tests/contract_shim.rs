//! The host-side contract check (`compiler::lint_shim::CONTRACT`) on its
//! own, for element types the providers do not admit yet: compiled by
//! rustc into a small program that checks closures over `f32`, `f64`,
//! `u8` and `i64`, which must find exactly the laws each one breaks
//! (floats within the documented tolerance).

use std::process::Command;

#[test]
fn the_check_finds_the_laws_each_operation_breaks() {
    let dir = std::env::temp_dir().join(format!("rmir-contract-shim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = r#"
fn report<T: Copy + core::fmt::Debug, F: Fn(T, T) -> T>(name: &str, op: F) {
    let found = check_contract(&op, true);
    let laws: Vec<&str> = found.iter().map(|f| f.split('\t').next().unwrap()).collect();
    println!("{name}: {}", if laws.is_empty() { "clean".to_string() } else { laws.join(",") });
}
fn main() {
    report("f32 add", |a: f32, b: f32| a + b);
    report("f64 add", |a: f64, b: f64| a + b);
    report("f64 mul", |a: f64, b: f64| a * b);
    report("f32 max", |a: f32, b: f32| a.max(b));
    report("f32 sub", |a: f32, b: f32| a - b);
    report("f64 mean", |a: f64, b: f64| (a + b) / 2.0);
    report("u8 wrapping add", |a: u8, b: u8| a.wrapping_add(b));
    report("u8 saturating add", |a: u8, b: u8| a.saturating_add(b));
    report("i64 min", |a: i64, b: i64| a.min(b));
    report("i64 left", |a: i64, _b: i64| a);
}
"#;
    let src = dir.join("shim.rs");
    std::fs::write(&src, format!("{}\n{cases}", compiler::lint_shim::CONTRACT)).unwrap();
    let bin = dir.join("shim");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let o = Command::new(&rustc)
        .args(["--edition", "2021", "-O"])
        .arg(&src)
        .arg("-o")
        .arg(&bin)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(&bin).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.trim(),
        "f32 add: clean\n\
         f64 add: clean\n\
         f64 mul: clean\n\
         f32 max: clean\n\
         f32 sub: associative,commutative\n\
         f64 mean: associative\n\
         u8 wrapping add: clean\n\
         u8 saturating add: clean\n\
         i64 min: clean\n\
         i64 left: commutative"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
