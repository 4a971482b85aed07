//! `--timings`: wall time per stage of a build, like rustc's time-passes.
//! Stages that run per chunk in parallel are summed over chunks (CPU time
//! spent in the stage), so per-callback figures divide by the callbacks.

use std::time::{Duration, Instant};

#[derive(Debug, Default, Clone)]
pub struct Timings {
    stages: Vec<(&'static str, Duration)>,
}

impl Timings {
    /// Adds `d` to `stage` (stages keep their first-seen order).
    pub fn add(&mut self, stage: &'static str, d: Duration) {
        match self.stages.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, t)) => *t += d,
            None => self.stages.push((stage, d)),
        }
    }

    /// Runs `f` and adds its time to `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.add(stage, t.elapsed());
        r
    }

    pub fn merge(&mut self, other: &Timings) {
        for (s, d) in &other.stages {
            self.add(s, *d);
        }
    }

    pub fn render(&self, callbacks: usize, ours: &[&str]) -> String {
        let n = callbacks.max(1) as f64;
        let mut out = String::from("stage                      total ms   per callback ms\n");
        let mut own = Duration::ZERO;
        for (s, d) in &self.stages {
            let ms = d.as_secs_f64() * 1e3;
            out.push_str(&format!("{s:24} {ms:10.2} {:17.3}\n", ms / n));
            if ours.contains(s) {
                own += *d;
            }
        }
        let ms = own.as_secs_f64() * 1e3;
        out.push_str(&format!(
            "{:24} {ms:10.2} {:17.3}   ({})\n",
            "our stages",
            ms / n,
            ours.join(", ")
        ));
        out
    }
}
