//! Many threads, and many processes, on one root: every read is a miss or
//! exactly the bytes of its key, and nothing is left half written.

use cache::{Cache, Key, KeyBuilder};
use std::convert::Infallible;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The content of key `i`: a pure function of `i`, so every writer of a key
/// writes the same bytes, as a content-addressed cache assumes. Sizes range
/// from a few bytes to a few hundred KiB, well past one page.
fn payload(i: u64) -> Vec<u8> {
    let len = 1 + (i * 7919 % 97) * 3000 + i % 5;
    (0..len).map(|j| (i * 31 + j * 7 + j / 251) as u8).collect()
}

fn key(i: u64) -> Key {
    KeyBuilder::new("stress/1")
        .part("i", &i.to_le_bytes())
        .finish()
}

/// A small deterministic generator (SplitMix64), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One worker: `rounds` random gets, puts and get-or-builds over the keys
/// it shares with every worker (0..8) and its own (1000 * (worker + 1)..).
fn work(cache: &Cache, worker: u64, rounds: u32) {
    let mut rng = Rng(worker);
    for _ in 0..rounds {
        let r = rng.next();
        let i = match r % 2 {
            0 => r / 2 % 8,
            _ => 1000 * (worker + 1) + r / 2 % 8,
        };
        let (k, expected) = (key(i), payload(i));
        match r / 16 % 3 {
            0 => {
                if let Some(bytes) = cache.get("stress", &k).unwrap() {
                    assert!(
                        bytes == expected,
                        "worker {worker}: key {i} read wrong bytes"
                    );
                }
            }
            1 => cache.put("stress", &k, &expected).unwrap(),
            _ => {
                let fetched = cache
                    .get_or_insert_with("stress", &k, || Ok::<_, Infallible>(payload(i)))
                    .unwrap();
                assert!(fetched.bytes == expected, "worker {worker}: key {i}");
                assert!(fetched.warnings.is_empty(), "{:?}", fetched.warnings);
            }
        }
    }
}

/// After the workers: every entry there is whole and right, and no writer
/// left a temporary file.
fn check_settled(root: &Path, workers: u64) {
    let cache = Cache::at(root);
    let stats = cache.stats().unwrap();
    assert_eq!(stats.temp_files, 0, "{stats}");
    let mut seen = 0;
    for i in (0..8).chain((0..workers).flat_map(|w| (0..8).map(move |j| 1000 * (w + 1) + j))) {
        if let Some(bytes) = cache.get("stress", &key(i)).unwrap() {
            assert!(bytes == payload(i), "key {i}");
            seen += 1;
        }
    }
    assert_eq!(stats.total().entries, seen);
    assert_eq!(cache.counters().corrupt, 0);
}

#[test]
fn threads_share_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    std::thread::scope(|s| {
        for worker in 0..8 {
            let cache = &cache;
            s.spawn(move || work(cache, worker, 150));
        }
    });
    let counters = cache.counters();
    assert_eq!((counters.corrupt, counters.errors), (0, 0), "{counters:?}");
    assert!(counters.hits > 0 && counters.misses > 0, "{counters:?}");
    check_settled(dir.path(), 8);
}

/// Set in the children of `processes_share_a_root`: the root to work in.
const CHILD_ROOT: &str = "RMIR_CACHE_TEST_CHILD_ROOT";
/// Set in the children: which worker this process is.
const CHILD_WORKER: &str = "RMIR_CACHE_TEST_CHILD_WORKER";

/// Runs this test binary again, four times at once, each a worker on one
/// root (with two threads of its own), while this process reads the shared
/// keys until they are done.
#[test]
fn processes_share_a_root() {
    if let (Some(root), Some(worker)) = (
        std::env::var_os(CHILD_ROOT),
        std::env::var(CHILD_WORKER).ok(),
    ) {
        let worker: u64 = worker.parse().unwrap();
        let cache = Cache::at(root);
        std::thread::scope(|s| {
            s.spawn(|| work(&cache, 2 * worker, 60));
            s.spawn(|| work(&cache, 2 * worker + 1, 60));
        });
        assert_eq!(cache.counters().corrupt, 0);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..4)
        .map(|worker| {
            Command::new(&exe)
                .args(["--exact", "processes_share_a_root", "--test-threads=1"])
                .env(CHILD_ROOT, dir.path())
                .env(CHILD_WORKER, worker.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let cache = Cache::at(dir.path());
    while children
        .iter_mut()
        .any(|child| child.try_wait().unwrap().is_none())
    {
        for i in 0..8 {
            if let Some(bytes) = cache.get("stress", &key(i)).unwrap() {
                assert!(bytes == payload(i), "key {i}");
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}\n{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        // The child ran the test, rather than matching no test at all.
        assert!(stdout.contains("1 passed"), "{stdout}");
    }
    assert_eq!(cache.counters().corrupt, 0);
    check_settled(dir.path(), 8);
}
