//! Cache keys: a SHA-256 over every byte and option that reaches an output.

use sha2::{Digest, Sha256};
use std::fmt;

/// Tags the key encoding itself, so that a later change of the encoding
/// cannot collide with keys of this one.
const KEY_FORMAT: &[u8] = b"rmir-cache-key/1\0";

/// The name of a cache entry: 32 bytes of SHA-256, shown as 64 lowercase hex
/// digits. Build one with [`KeyBuilder`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key([u8; 32]);

impl Key {
    /// A key from a digest computed elsewhere.
    pub fn from_bytes(bytes: [u8; 32]) -> Key {
        Key(bytes)
    }

    /// The 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses 64 lowercase hex digits (what [`Display`](fmt::Display)
    /// writes); anything else, uppercase included, is `None`, so that one key
    /// has exactly one spelling on disk.
    pub fn from_hex(hex: &str) -> Option<Key> {
        let digits = hex.as_bytes();
        if digits.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
            *byte = hex_value(pair[0])? << 4 | hex_value(pair[1])?;
        }
        Some(Key(bytes))
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in &self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}

/// Builds a [`Key`] from a domain and a sequence of named parts.
///
/// The hash input is the key format tag, then the domain, then each part's
/// name and bytes, every one of them prefixed by its length (u64, little
/// endian). The encoding can therefore be read back uniquely, which makes
/// the key injective on `(domain, [(name, bytes), ...])` up to SHA-256
/// collisions: `("ab", "c")` and `("a", "bc")` differ, and so do a part
/// with an empty value and no part at all.
///
/// **Order matters.** The same parts added in another order give another
/// key. This is on purpose: the argument order of a compiler command line,
/// or the order of link inputs, changes the output. Callers add parts in one
/// fixed order; where a set really is unordered, sort it before adding it.
/// (`manifest::Fingerprint::of_inputs`, by contrast, sorts its inputs and so
/// ignores their order.)
///
/// The domain separates uses: two kinds of artifact built from equal inputs
/// by different steps get different keys when their domains differ. Put a
/// version in it (`"provider-ptx/1"`) and bump it whenever the step changes
/// what it produces from the same inputs.
///
/// ```
/// use cache::KeyBuilder;
/// let key = KeyBuilder::new("provider-ptx/1")
///     .part("source", b"__global__ void k() {}")
///     .part("arch", b"sm_90")
///     .finish();
/// assert_eq!(key.to_string().len(), 64);
/// ```
#[derive(Clone)]
pub struct KeyBuilder {
    hasher: Sha256,
}

impl KeyBuilder {
    /// Starts a key in `domain`.
    pub fn new(domain: &str) -> KeyBuilder {
        let mut hasher = Sha256::new();
        hasher.update(KEY_FORMAT);
        hash_field(&mut hasher, domain.as_bytes());
        KeyBuilder { hasher }
    }

    /// Adds one input: its name (what it is, e.g. `"source"` or `"flags"`)
    /// and every byte of it.
    pub fn part(&mut self, name: &str, bytes: &[u8]) -> &mut KeyBuilder {
        hash_field(&mut self.hasher, name.as_bytes());
        hash_field(&mut self.hasher, bytes);
        self
    }

    /// The key of the parts added so far. The builder is left as it was, so
    /// it can be finished again after more parts.
    pub fn finish(&self) -> Key {
        Key(self.hasher.clone().finalize().into())
    }
}

impl fmt::Debug for KeyBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyBuilder").finish_non_exhaustive()
    }
}

fn hash_field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_other_spellings() {
        let key = KeyBuilder::new("d").part("a", b"b").finish();
        let hex = key.to_string();
        assert_eq!(hex.len(), 64);
        assert!(hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        assert_eq!(Key::from_hex(&hex), Some(key));
        assert_eq!(Key::from_hex(&hex.to_uppercase()), None);
        assert_eq!(Key::from_hex(&hex[..63]), None);
        assert_eq!(Key::from_hex(&format!("{hex}0")), None);
        assert_eq!(Key::from_hex(&format!("{}g", &hex[..63])), None);
    }
}
