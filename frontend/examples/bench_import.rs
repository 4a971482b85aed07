//! Benchmark (not a test): parse and prepare a MIR file, in process.
//! `cargo run --release -p frontend --example bench_import -- FILE.mir [REPEATS]`
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect("usage: bench_import FILE.mir [REPEATS]");
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);
    let text = std::fs::read_to_string(&file).expect("readable MIR file");
    let lines = text.lines().count();
    let mut times = Vec::new();
    let mut regs = 0;
    for _ in 0..repeats {
        let t = Instant::now();
        let doc = frontend::bridge::import_mir_text(&file, &text).expect("valid MIR");
        let json = doc.to_json();
        times.push(t.elapsed().as_secs_f64());
        regs = doc.registrations.len();
        std::hint::black_box(json);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{file}: {lines} lines, {regs} registrations: median {:.2} ms (parse + prepare + JSON), min {:.2} ms, {} runs",
        median * 1e3,
        times[0] * 1e3,
        repeats
    );
}
