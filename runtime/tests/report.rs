//! Rendering of run and benchmark reports (numbers made up; the arithmetic
//! of GB/s and ratios is what is checked).

use manifest::{Case, RegistrationId, Variant};
use runtime::run::CaseOutcome;
use runtime::{BenchReport, BenchRow, Report};

fn row(
    label: &str,
    kernel: Option<&str>,
    variant: Option<Variant>,
    bytes: u64,
    ms: [f64; 2],
    check: &str,
) -> BenchRow {
    BenchRow {
        label: label.into(),
        kernel: kernel.map(str::to_string),
        variant,
        registration: kernel
            .filter(|k| k.contains("reduce"))
            .map(|_| RegistrationId(0)),
        bytes,
        median_ms: ms.to_vec(),
        registers: kernel.map(|_| 32),
        local_bytes: kernel.map(|_| 0),
        grid: kernel.map(|_| 1056),
        check: check.into(),
    }
}

#[test]
fn bench_table() {
    let n = 1u64 << 28;
    let report = BenchReport {
        device: "NVIDIA H200 (sm_90, 132 SMs)".into(),
        size: n,
        buffers: 4,
        warmup: 5,
        repeats: 50,
        grid_note: String::new(),
        rows: vec![
            row(
                "rust ltoir",
                Some("rcb_reduce_i32_r0_rust_ltoir"),
                Some(Variant::RustLtoir),
                4 * n,
                [0.2800, 0.2810],
                "ok",
            ),
            row(
                "rust ptx",
                Some("rcb_reduce_i32_r0_rust_ptx"),
                Some(Variant::RustPtx),
                4 * n,
                [0.3500, 0.3490],
                "ok",
            ),
            row(
                "C++ functor",
                Some("rcb_reduce_i32_r0_cpp_functor"),
                Some(Variant::CppFunctor),
                4 * n,
                [0.2790, 0.2800],
                "ok",
            ),
            row(
                "copy kernel",
                Some("rcb_copy_i32"),
                Some(Variant::Plain),
                8 * n,
                [0.5000, 0.5010],
                "ok",
            ),
            row("driver memcpy", None, None, 8 * n, [0.5200, 0.5100], "ok"),
        ],
    };
    assert!(report.all_checks_ok());
    let ceiling = report.copy_ceiling().unwrap();
    assert!((ceiling - 8.0 * n as f64 / 0.5e-3 / 1e9).abs() < 1e-6);
    insta::assert_snapshot!(report.render());
}

#[test]
fn run_report() {
    let case = |size, expected| Case {
        size,
        seed: 3,
        offset: 1,
        init: 10,
        expected,
    };
    let outcome = |size, expected, got| CaseOutcome {
        registration: RegistrationId(2),
        kernel: "rcb_reduce_i32_r2_rust_ltoir".into(),
        case: case(size, expected),
        got,
        grid: 1,
    };
    let report = Report {
        device: "test".into(),
        outcomes: vec![outcome(31, 5, 5), outcome(1025, 7, 8), outcome(33, 1, 1)],
        skipped: 2,
    };
    assert_eq!((report.passed(), report.failed()), (2, 1));
    insta::assert_snapshot!(report.render());
}

#[test]
fn a_run_in_which_no_case_ran_is_not_a_pass() {
    let report = Report {
        device: "test".into(),
        outcomes: vec![],
        skipped: 14,
    };
    assert_eq!((report.passed(), report.failed()), (0, 0));
    assert!(!report.ok());
    assert_eq!(
        report.render(),
        "0 passed, 0 failed (14 skipped by --max-size)\nno case ran: nothing was checked"
    );
}
