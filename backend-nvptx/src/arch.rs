//! GPU architecture names (`sm_90`, `sm_90a`, `compute_90`).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A GPU architecture: compute capability `major*10 + minor` and an optional
/// feature suffix (`a` arch-specific, `f` family-specific).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Arch {
    /// `90` for sm_90.
    pub number: u32,
    /// `Some('a')` for sm_90a.
    pub suffix: Option<char>,
}

impl Arch {
    /// sm_90, the project's default target (H100/H200).
    pub const SM_90: Arch = Arch {
        number: 90,
        suffix: None,
    };

    /// Real architecture name, e.g. `sm_90` (what nvJitLink's `-arch=` takes).
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.number, self.suffix_str())
    }

    /// Virtual architecture name, e.g. `compute_90` (what PTX and NVVM take).
    pub fn compute(&self) -> String {
        format!("compute_{}{}", self.number, self.suffix_str())
    }

    /// LTO architecture name, e.g. `lto_90` (nvcc's name for LTOIR code).
    pub fn lto(&self) -> String {
        format!("lto_{}{}", self.number, self.suffix_str())
    }

    fn suffix_str(&self) -> String {
        self.suffix.map(String::from).unwrap_or_default()
    }
}

impl Default for Arch {
    fn default() -> Self {
        Arch::SM_90
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sm())
    }
}

/// An architecture name that is not `sm_NN[a|f]`, `compute_NN[a|f]` or `lto_NN`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid GPU architecture `{text}`: expected a name like sm_90, sm_90a or compute_90")]
pub struct ArchError {
    pub text: String,
}

impl FromStr for Arch {
    type Err = ArchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || ArchError {
            text: text.to_string(),
        };
        let rest = ["sm_", "compute_", "lto_"]
            .iter()
            .find_map(|prefix| text.strip_prefix(prefix))
            .ok_or_else(err)?;
        let (digits, suffix) = match rest.char_indices().last() {
            Some((i, c @ ('a' | 'f'))) => (&rest[..i], Some(c)),
            _ => (rest, None),
        };
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let number: u32 = digits.parse().map_err(|_| err())?;
        if number < 10 {
            return Err(err());
        }
        Ok(Arch { number, suffix })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_each_form() {
        let cases = [
            ("sm_90", Some(("sm_90", "compute_90"))),
            ("sm_90a", Some(("sm_90a", "compute_90a"))),
            ("compute_80", Some(("sm_80", "compute_80"))),
            ("lto_100f", Some(("sm_100f", "compute_100f"))),
            ("sm_", None),
            ("sm_9", None),
            ("sm_9x", None),
            ("sm90", None),
            ("", None),
            ("sm_99999", None),
        ];
        for (text, expect) in cases {
            let got = text.parse::<Arch>().ok().map(|a| (a.sm(), a.compute()));
            let expect = expect.map(|(s, c)| (s.to_string(), c.to_string()));
            assert_eq!(got, expect, "{text}");
        }
    }
}
