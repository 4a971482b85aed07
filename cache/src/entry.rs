//! The bytes of one entry file: a fixed header, then the payload.
//!
//! ```text
//! offset  size  field
//!      0     8  magic, b"RMIRCACH"
//!      8     4  format version, u32 little endian (FORMAT_VERSION)
//!     12     8  payload length in bytes, u64 little endian
//!     20    32  SHA-256 of the payload
//!     52     n  payload
//! ```

use sha2::{Digest, Sha256};

/// Marks a file as a cache entry.
pub(crate) const MAGIC: [u8; 8] = *b"RMIRCACH";

/// The version of this header. An entry of another version is treated as
/// damaged; an incompatible change also gets a new layout directory (`v2`),
/// so old and new compilers do not delete each other's entries.
pub(crate) const FORMAT_VERSION: u32 = 1;

pub(crate) const HEADER_LEN: usize = 8 + 4 + 8 + 32;

/// Why an entry file was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Damage {
    /// Shorter than a header (an empty file, say).
    Truncated,
    BadMagic,
    BadVersion,
    /// The file is longer or shorter than the header says.
    BadLength,
    /// The payload is not the one the header's hash names.
    BadHash,
}

/// The header for `payload`.
pub(crate) fn header(payload: &[u8]) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[0..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[12..20].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    header[20..52].copy_from_slice(&Sha256::digest(payload));
    header
}

/// Checks a whole entry file; on success its payload is `file[HEADER_LEN..]`.
pub(crate) fn verify(file: &[u8]) -> Result<(), Damage> {
    let (Some(head), Some(payload)) = (file.get(..HEADER_LEN), file.get(HEADER_LEN..)) else {
        return Err(Damage::Truncated);
    };
    if head[0..8] != MAGIC {
        return Err(Damage::BadMagic);
    }
    if head[8..12] != FORMAT_VERSION.to_le_bytes() {
        return Err(Damage::BadVersion);
    }
    if head[12..20] != (payload.len() as u64).to_le_bytes() {
        return Err(Damage::BadLength);
    }
    if head[20..52] != Sha256::digest(payload)[..] {
        return Err(Damage::BadHash);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(payload: &[u8]) -> Vec<u8> {
        let mut file = header(payload).to_vec();
        file.extend_from_slice(payload);
        file
    }

    #[test]
    fn a_whole_entry_verifies() {
        assert_eq!(verify(&entry(b"payload")), Ok(()));
        assert_eq!(verify(&entry(b"")), Ok(()));
    }

    #[test]
    fn each_kind_of_damage_is_named() {
        let good = entry(b"payload");
        let damaged = |offset: usize| {
            let mut file = good.clone();
            file[offset] ^= 1;
            verify(&file)
        };
        assert_eq!(verify(&[]), Err(Damage::Truncated));
        assert_eq!(verify(&good[..HEADER_LEN - 1]), Err(Damage::Truncated));
        assert_eq!(damaged(0), Err(Damage::BadMagic));
        assert_eq!(damaged(8), Err(Damage::BadVersion));
        assert_eq!(damaged(12), Err(Damage::BadLength));
        assert_eq!(damaged(20), Err(Damage::BadHash));
        assert_eq!(damaged(HEADER_LEN), Err(Damage::BadHash));
        assert_eq!(verify(&good[..good.len() - 1]), Err(Damage::BadLength));
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(verify(&longer), Err(Damage::BadLength));
    }
}
