//! Benchmark (not a test): admission over many generated callbacks.
//!
//! `python3 benches/gen_callbacks.py 1000 > /tmp/gen1000.rs`
//! `cargo run --release -p passes --example bench_admission -- /tmp/gen1000.rs`
//!
//! Times each stage once rustc's MIR is in hand: prepare (parse + resolve),
//! import into `rmir`, reading the facts off the dialect, and the rules.
use std::time::Instant;

use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;
use passes::admission;

fn main() {
    let file = std::env::args()
        .nth(1)
        .expect("usage: bench_admission FILE.rs [REPEATS]");
    let repeats: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let bridge = Bridge::new(RustcConfig::default()).expect("rustc");
    let t = Instant::now();
    let mir = bridge
        .emit_mir(std::path::Path::new(&file))
        .expect("rustc accepts the file");
    let rustc_s = t.elapsed().as_secs_f64();
    let context = ir::context().expect("dialect loads");
    let mut stages = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut n = 0;
    let mut admitted = 0;
    for _ in 0..repeats {
        let t0 = Instant::now();
        let doc =
            frontend::bridge::import_mir_text(&format!("{file}.mir"), &mir).expect("MIR parses");
        let t1 = Instant::now();
        let module = ir::import(&context, &doc).expect("imports");
        let t2 = Instant::now();
        let facts = ir::facts(&module).expect("facts");
        let t3 = Instant::now();
        let outcomes = admission::admit(&facts);
        let t4 = Instant::now();
        n = outcomes.len();
        admitted = outcomes
            .iter()
            .filter(|o| matches!(o.verdict, admission::Verdict::Admitted(_)))
            .count();
        for (k, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3].into_iter().enumerate() {
            stages[k].push(d.as_secs_f64());
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{file}: {n} registrations ({admitted} admitted); rustc --emit=mir {:.0} ms once",
        rustc_s * 1e3
    );
    for (name, v) in ["prepare", "import to rmir", "read facts", "admission rules"]
        .iter()
        .zip(stages.iter_mut())
    {
        let m = median(v);
        println!(
            "  {name:16} {:8.2} ms  {:8.1} µs/callback",
            m * 1e3,
            m * 1e6 / n as f64
        );
    }
}
