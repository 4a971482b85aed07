//! A bound on how deeply a text's brackets nest, checked before MLIR's
//! parser sees the text.
//!
//! MLIR's parser recurses once for each nested region, attribute, type or
//! location and has no limit of its own: `"builtin.module"() ({` repeated
//! 514 times overflows a 2 MiB thread stack (rayon's and the test harness's
//! threads have 2 MiB), about 4 KiB a level; `module {` costs 2.1 KiB a
//! level, array and dictionary attributes 1.2–1.4 KiB, types and locations
//! 0.3–0.6 KiB (measured on Debian's LLVM 22 build). A stack overflow kills
//! the process with no message, so a text nested deeper than
//! [`MAX_NESTING`] is refused with a located error instead. The modules this
//! project prints nest about a dozen levels.
//!
//! The scan is a cut-down MLIR lexer: it skips string literals (with their
//! escapes) and `//` comments, counts `(`, `[`, `{` and `<` as openers, and
//! lets a closer end the innermost opener it matches. `>` ends only a `<`
//! (`->` is never a closer) and a `)`, `]` or `}` also ends any `<` above
//! its opener, so a `<` that is not a bracket (`>=` in an integer set) costs
//! nothing. The depth is checked when an opener is pushed, before anything
//! after it is read: a closer the parser would refuse cannot hide depth, as
//! the parser stops at it.

/// The deepest bracket nesting [`crate::parse`] accepts: 256 levels of the
/// costliest single-bracket construct (`module {`) take about 0.6 MiB of
/// the parser's stack, and two-bracket regions (`({`) about 0.5 MiB.
pub const MAX_NESTING: usize = 256;

/// Where a text nests too deeply: the 1-based line and byte column of the
/// opener that goes past [`MAX_NESTING`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    pub line: u32,
    pub col: u32,
}

/// `Err` at the first opener nested deeper than [`MAX_NESTING`].
pub fn check(text: &[u8]) -> Result<(), TooDeep> {
    let mut open: Vec<u8> = Vec::new();
    let (mut line, mut line_start) = (1u32, 0usize);
    let mut i = 0;
    while i < text.len() {
        let byte = text[i];
        match byte {
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b'"' => {
                // A string ends at its closing quote; MLIR refuses one that
                // meets a line end or the end of the text, and so do we by
                // ending it there (the newline is counted below).
                i += 1;
                while i < text.len() && !matches!(text[i], b'"' | b'\n' | b'\r') {
                    // An escape takes the next byte along, unless it ends
                    // the line (which MLIR refuses).
                    let escaped = text[i] == b'\\'
                        && text.get(i + 1).is_some_and(|b| !matches!(b, b'\n' | b'\r'));
                    i += if escaped { 2 } else { 1 };
                }
                if i < text.len() && text[i] != b'"' {
                    continue;
                }
            }
            b'/' if text.get(i + 1) == Some(&b'/') => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' | b'{' | b'<' => {
                open.push(byte);
                if open.len() > MAX_NESTING {
                    return Err(TooDeep {
                        line,
                        col: u32::try_from(i - line_start + 1).unwrap_or(u32::MAX),
                    });
                }
            }
            b'>' => {
                let arrow = i > 0 && text[i - 1] == b'-';
                if !arrow && open.last() == Some(&b'<') {
                    open.pop();
                }
            }
            b')' | b']' | b'}' => {
                let opener = match byte {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if let Some(at) = open.iter().rposition(|&b| b != b'<') {
                    if open[at] == opener {
                        open.truncate(at);
                    }
                } else {
                    open.clear();
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(text: &str) -> bool {
        check(text.as_bytes()).is_ok()
    }

    #[test]
    fn the_limit_is_inclusive() {
        assert!(depth_ok(&"(".repeat(MAX_NESTING)));
        assert_eq!(
            check("(".repeat(MAX_NESTING + 1).as_bytes()),
            Err(TooDeep {
                line: 1,
                col: MAX_NESTING as u32 + 1
            })
        );
    }

    #[test]
    fn closed_brackets_do_not_add_up() {
        assert!(depth_ok(&"({[<>]})".repeat(10 * MAX_NESTING)));
        assert!(depth_ok(&"module {\n}\n".repeat(10 * MAX_NESTING)));
    }

    #[test]
    fn arrows_and_comparisons_are_not_closers() {
        // Each `<` stays open: `->` does not end it.
        let arrows = "!llvm.ptr<() -> ".repeat(MAX_NESTING + 1);
        assert!(!depth_ok(&arrows));
        // A `<` that is not a bracket ends with the bracket around it.
        let compare = "(d0 < 1)".repeat(10 * MAX_NESTING);
        assert!(depth_ok(&compare));
    }

    #[test]
    fn strings_and_comments_hide_brackets() {
        let deep = "(".repeat(10 * MAX_NESTING);
        assert!(depth_ok(&format!("\"{deep}\" \"\\\"{deep}\"")));
        assert!(depth_ok(&format!("// {deep}\nx")));
        // A string ends at a line end, as MLIR's lexer ends it.
        assert!(!depth_ok(&format!("\"x\n{deep}")));
    }

    #[test]
    fn the_position_is_the_opener_past_the_limit() {
        let text = format!("module {{\n  {}", "[".repeat(MAX_NESTING));
        assert_eq!(
            check(text.as_bytes()),
            Err(TooDeep {
                line: 2,
                col: 3 + MAX_NESTING as u32 - 1
            })
        );
    }
}
