//! Parsing a name at the edge: rustc's convention for pass names, an
//! unknown one is an error listing the valid ones.

use std::fmt;

/// A name that is none of the valid ones of its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What was named: `provider`, `scalar type`, `call kind`.
    pub what: &'static str,
    pub name: String,
    pub valid: Vec<&'static str>,
}

/// The one of `among` whose name is `name`, or an [`UnknownName`] of kind
/// `what` listing the names of `among`.
pub(crate) fn parse_among<T: Copy, const N: usize>(
    what: &'static str,
    name: &str,
    among: [T; N],
    name_of: fn(T) -> &'static str,
) -> Result<T, UnknownName> {
    among
        .into_iter()
        .find(|t| name_of(*t) == name)
        .ok_or_else(|| UnknownName {
            what,
            name: name.to_string(),
            valid: among.map(name_of).to_vec(),
        })
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} `{}`; valid: ", self.what, self.name)?;
        for (i, v) in self.valid.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{v}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownName {}

/// Serde for a type that is written as its name: `serialize` writes
/// `name()`, `deserialize` reads through `parse`, whose error lists the
/// valid names.
#[cfg(feature = "serde")]
macro_rules! serde_by_name {
    ($ty:ty) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                <$ty>::parse(&name).map_err(serde::de::Error::custom)
            }
        }
    };
}

#[cfg(feature = "serde")]
pub(crate) use serde_by_name;
