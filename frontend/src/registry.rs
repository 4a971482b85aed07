//! The tables that decide what a callee is: registration functions of the
//! provider API crate (`native`), and the pure `core` scalar methods that the
//! GPU side may call. Everything about names lives here, nowhere else.

/// A registration function of the provider API and the native provider that
/// implements it on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistrationFn {
    /// Function name in the `native` crate.
    pub function: &'static str,
    /// The provider (a CUDA C++ template under `providers/`).
    pub provider: &'static str,
    /// Index of the callback among the call's arguments.
    pub callback_arg: usize,
}

/// Name of the provider API crate as user code refers to it.
pub const API_CRATE: &str = "native";

pub const REGISTRATIONS: &[RegistrationFn] = &[
    RegistrationFn {
        function: "reduce",
        provider: "reduce",
        callback_arg: 2,
    },
    RegistrationFn {
        function: "reduce_mut",
        provider: "reduce",
        callback_arg: 2,
    },
];

/// Pure `core` methods on scalars that compile to a few instructions with no
/// memory access and no call into anything CUDA. Inherent methods print as
/// `core::num::<impl i32>::wrapping_add`; trait methods as `<i32 as Ord>::max`.
pub const CORE_SCALAR_METHODS: &[&str] = &[
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_neg",
    "wrapping_shl",
    "wrapping_shr",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "rotate_left",
    "rotate_right",
    "count_ones",
    "count_zeros",
    "leading_zeros",
    "trailing_zeros",
    "swap_bytes",
    "reverse_bits",
    "abs",
    "signum",
    "is_negative",
    "is_positive",
    "min",
    "max",
    "clamp",
    "pow",
    "unsigned_abs",
    "abs_diff",
];

/// Resolves a callee path against the registration table, given the path as
/// printed (without generic arguments). MIR trims the crate prefix when the
/// name is unambiguous (`reduce_mut` rather than `native::reduce_mut`), so both
/// spellings match; a path with another crate prefix does not.
pub fn registration(path: &str) -> Option<&'static RegistrationFn> {
    let name = match path.rsplit_once("::") {
        Some((prefix, name)) if prefix == API_CRATE => name,
        Some(_) => return None,
        None => path,
    };
    REGISTRATIONS.iter().find(|r| r.function == name)
}

/// If `path` is an allowlisted scalar method, returns `(method, type)`.
///
/// Accepted spellings: `core::num::<impl i32>::wrapping_add`,
/// `core::f32::<impl f32>::abs`, `<i32 as Ord>::max`,
/// `std::cmp::Ord::max` is *not* accepted (no receiver type).
pub fn core_scalar(path: &str) -> Option<(String, String)> {
    let (prefix, method) = path.rsplit_once("::")?;
    if !CORE_SCALAR_METHODS.contains(&method) {
        return None;
    }
    let ty = if let Some(rest) = prefix.strip_prefix('<') {
        // `<i32 as Ord>`
        let inner = rest.strip_suffix('>')?;
        let (ty, tr) = inner.split_once(" as ")?;
        if !matches!(tr, "Ord" | "PartialOrd" | "std::cmp::Ord" | "core::cmp::Ord") {
            return None;
        }
        ty
    } else {
        // `core::num::<impl i32>` / `std::f32::<impl f32>`
        let (krate, rest) = prefix.split_once("::")?;
        if !matches!(krate, "core" | "std") {
            return None;
        }
        let imp = rest.rsplit("::").next()?;
        imp.strip_prefix("<impl ")?.strip_suffix('>')?
    };
    crate::ty::Scalar::from_name(ty)?;
    Some((method.to_string(), ty.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_paths() {
        assert_eq!(registration("native::reduce").unwrap().function, "reduce");
        assert_eq!(registration("reduce_mut").unwrap().function, "reduce_mut");
        assert!(registration("other::reduce").is_none());
        assert!(registration("native::nope").is_none());
    }

    #[test]
    fn scalar_methods() {
        assert_eq!(
            core_scalar("core::num::<impl i32>::wrapping_add"),
            Some(("wrapping_add".into(), "i32".into()))
        );
        assert_eq!(
            core_scalar("<i32 as Ord>::max"),
            Some(("max".into(), "i32".into()))
        );
        assert_eq!(core_scalar("core::num::<impl i32>::checked_div"), None);
        assert_eq!(core_scalar("<Foo as Ord>::max"), None);
        assert_eq!(core_scalar("mycrate::num::<impl i32>::abs"), None);
    }
}
