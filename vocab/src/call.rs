//! What a call in a callback's body resolves to.

use crate::name::{parse_among, UnknownName};

/// How a callee resolves, in the frontend's one order: a body of the file,
/// a registration of the provider API, a core scalar method, a panic entry
/// point, a call through a value, else foreign (an `extern "C"` declaration
/// of the crate is [`CallKind::Extern`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// A body of the same program.
    Local,
    /// A registration function of the provider API (another provider).
    Registration,
    /// A pure core scalar method or intrinsic of the capability table.
    Core,
    /// A panic entry point of core or std.
    Panic,
    /// A call through a function pointer or a closure value.
    Indirect,
    /// A function with no body the program has.
    Foreign,
    /// A function an `extern "C"` block of the crate declares.
    Extern,
}

impl CallKind {
    pub const ALL: [CallKind; 7] = [
        CallKind::Local,
        CallKind::Registration,
        CallKind::Core,
        CallKind::Panic,
        CallKind::Indirect,
        CallKind::Foreign,
        CallKind::Extern,
    ];

    /// The name the `rmir.call` op's `kind` attribute carries.
    pub const fn name(self) -> &'static str {
        match self {
            CallKind::Local => "local",
            CallKind::Registration => "registration",
            CallKind::Core => "core",
            CallKind::Panic => "panic",
            CallKind::Indirect => "indirect",
            CallKind::Foreign => "foreign",
            CallKind::Extern => "extern",
        }
    }

    pub fn parse(name: &str) -> Result<CallKind, UnknownName> {
        parse_among("call kind", name, CallKind::ALL, CallKind::name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in CallKind::ALL {
            assert_eq!(CallKind::parse(k.name()), Ok(k));
        }
        assert!(CallKind::parse("virtual").is_err());
    }
}
