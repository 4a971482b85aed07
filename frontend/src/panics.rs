//! Panic paths: the blocks of a body from which every path ends in a panic.
//!
//! On the GPU a panic traps, so such a block *is* a trap: what it computes
//! only builds the panic's message (`format_args!`, `fmt::Arguments`,
//! `Argument::new_display`, fn-pointer casts of `Display::fmt` at `-O`), and
//! none of it is observable once the thread traps. The importer turns these
//! blocks into one trap, so a formatted `panic!`, `assert!` or
//! `unreachable!` inside a callback compiles like a literal one, and the
//! message-building MIR, which is outside the supported subset, never
//! reaches admission.
//!
//! A block is on a panic path when its terminator is a diverging panic
//! call (`panic_fmt`, `panic`), `unreachable` (undefined behaviour if
//! reached, so a trap refines it), or an edge that can only continue onto
//! panic paths: `goto`, `switchInt`, `assert`, `drop`, and calls of panic
//! message constructors or of the `fmt` machinery. Any other call (a helper,
//! a CUDA API, a foreign function) keeps its block, so admission still sees
//! and judges it. Cycles are never panic paths (least fixpoint), so an
//! infinite loop keeps its body.

use crate::pmir::{Body, Resolution, TerminatorKind};

/// A call that only builds a panic's message when it appears on a panic
/// path: the `format_args!` machinery (`registry::is_fmt_machinery`), and
/// `std::fmt::format`. (Panic entry points and message constructors are
/// `Resolution::Panic`, checked beside this.)
fn is_message_builder(path: &str) -> bool {
    crate::registry::is_fmt_machinery(path) || path == "std::fmt::format"
}

/// For each block of `body` (by index), whether every path from it panics.
pub fn panic_blocks(body: &Body) -> Vec<bool> {
    let n = body.blocks.len();
    let mut bound = vec![false; n];
    let at =
        |bound: &[bool], b: crate::pmir::BlockId| bound.get(b.0 as usize).copied().unwrap_or(false);
    loop {
        let mut changed = false;
        for (i, block) in body.blocks.iter().enumerate() {
            if bound[i] {
                continue;
            }
            let now = match &block.terminator.kind {
                TerminatorKind::Unreachable => true,
                TerminatorKind::Call { callee, target, .. } => {
                    let panic = matches!(callee.resolution, Resolution::Panic { .. });
                    match target {
                        None => panic,
                        Some(t) => (panic || is_message_builder(&callee.path)) && at(&bound, *t),
                    }
                }
                TerminatorKind::Goto(t)
                | TerminatorKind::Assert { target: t, .. }
                | TerminatorKind::Drop { target: t, .. } => at(&bound, *t),
                TerminatorKind::SwitchInt {
                    targets, otherwise, ..
                } => at(&bound, *otherwise) && targets.iter().all(|(_, t)| at(&bound, *t)),
                TerminatorKind::Return
                | TerminatorKind::UnwindResume
                | TerminatorKind::Unparsed { .. } => false,
            };
            if now {
                bound[i] = true;
                changed = true;
            }
        }
        if !changed {
            return bound;
        }
    }
}
