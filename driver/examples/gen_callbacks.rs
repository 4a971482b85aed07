//! Writes a file of random callbacks for differential testing.
//!
//! `cargo run -p driver --example gen_callbacks -- SEED N` prints `N`
//! callbacks for `SEED`; `… SEED --one INDEX` prints callback `INDEX` of
//! `SEED` alone (what a failure report names). Same seed, same bytes.

#[path = "../tests/common/gen.rs"]
mod gen;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!("usage: gen_callbacks SEED N | gen_callbacks SEED --one INDEX");
        std::process::exit(2)
    };
    let num =
        |s: Option<&String>| -> u64 { s.and_then(|s| s.parse().ok()).unwrap_or_else(|| usage()) };
    let seed = num(args.first());
    let text = match args.get(1).map(String::as_str) {
        Some("--one") => {
            let i = num(args.get(2)) as usize;
            format!("{}{}", gen::header(seed), gen::callback(seed, i).source)
        }
        _ => {
            let (text, callbacks) = gen::file(seed, num(args.get(1)) as usize);
            let calls: usize = callbacks.iter().map(|c| c.methods.len()).sum();
            let constructs: usize = callbacks.iter().map(|c| c.constructs.len()).sum();
            eprintln!(
                "{} callbacks, {calls} core method calls, {constructs} enum values and aggregate captures",
                callbacks.len()
            );
            text
        }
    };
    print!("{text}");
}
