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
    "wrapping_abs",
    "wrapping_div",
    "wrapping_rem",
    "wrapping_pow",
    "saturating_pow",
    "is_power_of_two",
    "sqrt",
    "floor",
    "ceil",
    "round",
    "trunc",
    "mul_add",
    "copysign",
    "recip",
];

/// `core::intrinsics` functions that MIR inlining exposes at opt-level 3
/// (`rotate_left::<u32>` inside an inlined `i32::rotate_left`), all pure.
pub const CORE_INTRINSICS: &[&str] = &[
    "rotate_left",
    "rotate_right",
    "ctpop",
    "ctlz",
    "cttz",
    "bswap",
    "bitreverse",
    "cold_path",
    "likely",
    "unlikely",
    "unchecked_add",
    "unchecked_sub",
    "unchecked_mul",
    "unchecked_div",
    "unchecked_rem",
    "unchecked_shl",
    "unchecked_shr",
    "exact_div",
    "three_way_compare",
    "saturating_add",
    "saturating_sub",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "minnumf32",
    "maxnumf32",
    "minnumf64",
    "maxnumf64",
    "fabsf32",
    "fabsf64",
];

/// Paths that start a panic, or build its message.
pub const PANIC_PATHS: &[&str] = &[
    "core::panicking::",
    "std::panicking::",
    "std::rt::panic_fmt",
    "std::rt::begin_panic",
    "core::panicking::panic_fmt",
    "Arguments::<'_>::new_const",
    "Arguments::<'_>::from_str",
    "Arguments::<'_>::new_v1",
    "Arguments::<'_>::new",
    "core::fmt::Arguments::",
    "std::fmt::Arguments::",
    "core::hint::unreachable_unchecked",
    "std::hint::unreachable_unchecked",
    "core::slice::index::slice_index_fail",
    "core::option::unwrap_failed",
    "core::result::unwrap_failed",
];

/// If `path` is a pure core intrinsic, returns its name. A bare name (MIR
/// trims `core::intrinsics::`) counts only with generic arguments, which
/// intrinsics have and a user's `extern` function cannot, or with a float
/// type suffix (`fabsf32`, `maxnumf64`), as the float intrinsics are spelled.
pub fn core_intrinsic(path: &str, has_generics: bool) -> Option<String> {
    let float_suffixed = ["f16", "f32", "f64", "f128"]
        .iter()
        .any(|s| path.ends_with(s));
    let name = match path
        .strip_prefix("core::intrinsics::")
        .or_else(|| path.strip_prefix("std::intrinsics::"))
    {
        Some(n) => n,
        None if (has_generics || float_suffixed) && !path.contains("::") => path,
        None => return None,
    };
    CORE_INTRINSICS.contains(&name).then(|| name.to_string())
}

pub fn is_panic_path(path: &str) -> bool {
    PANIC_PATHS.iter().any(|p| {
        if p.ends_with("::") {
            path.starts_with(p)
        } else {
            path == *p
        }
    })
}

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
        if !matches!(
            tr,
            "Ord" | "PartialOrd" | "std::cmp::Ord" | "core::cmp::Ord"
        ) {
            return None;
        }
        ty
    } else {
        // `core::num::<impl i32>` / `std::f32::<impl f32>`
        // `core::num::<impl i32>`, `core::f32::<impl f32>`, `std::f32::<impl f32>`.
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
