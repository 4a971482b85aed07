//! Build fingerprints: a SHA-256 over every input of a build.

use serde::{Deserialize, Serialize};

/// A build's fingerprint: 64 lowercase hex digits of SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(pub String);

impl Fingerprint {
    /// Hashes named inputs (source files, flags, toolchain versions, external
    /// LTO files, ...). The result does not depend on the order of `inputs`
    /// (they are sorted by name, then bytes) and is injective on the list:
    /// every name and payload is length-prefixed, under a format tag.
    #[cfg(feature = "hash")]
    pub fn of_inputs<N: AsRef<str>, B: AsRef<[u8]>>(inputs: &[(N, B)]) -> Fingerprint {
        use sha2::{Digest, Sha256};
        let mut sorted: Vec<(&str, &[u8])> = inputs
            .iter()
            .map(|(n, b)| (n.as_ref(), b.as_ref()))
            .collect();
        sorted.sort();
        let mut hasher = Sha256::new();
        hasher.update(b"rcb-fingerprint/1\0");
        hasher.update((sorted.len() as u64).to_le_bytes());
        for (name, bytes) in sorted {
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        let digest = hasher.finalize();
        let mut hex = String::with_capacity(64);
        for byte in digest.iter() {
            hex.push_str(&format!("{byte:02x}"));
        }
        Fingerprint(hex)
    }

    /// Whether this is 64 lowercase hex digits.
    pub fn is_well_formed(&self) -> bool {
        self.0.len() == 64
            && self
                .0
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
