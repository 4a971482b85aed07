//! rustc's layout of closure objects, measured on stable Rust.
//!
//! A closure passed to the GPU as its own bytes must be read with rustc's
//! layout of that closure, and rustc reorders a closure's fields: captures
//! `u8, u16, u32, f64, i8, i64, u16` sit at offsets 24, 20, 16, 0, 25, 8, 22
//! (size 32, align 8). Stable Rust has no API that gives a closure's field
//! offsets (`offset_of!` cannot name a closure type), so this module measures
//! them, two ways, in one generated program built by the same rustc:
//!
//! 1. **The probe struct.** For captures `T0, T1, …` in capture order, a
//!    default-repr `struct P(T0, T1, …)`, measured with `offset_of!`,
//!    `size_of` and `align_of`. rustc lays out closures and such structs with
//!    the same routine (`univariant`, all fields reorderable), so the offsets
//!    are the closure's. That is rustc's behaviour, not a language guarantee.
//! 2. **The real closure.** A `move` closure capturing variables of those
//!    types, each mentioned once in that order, whose body stores the address
//!    of every captured field (`addr_of!(v)` inside the body is the field in
//!    the closure object). Its offsets are those addresses minus the
//!    object's; its size and alignment come from `size_of_val` and
//!    `align_of_val`; and its bytes at those offsets must be the captured
//!    values, each given a distinct byte pattern.
//!
//! The two must agree on every offset, the size and the alignment, and the
//! bytes must hold the values; anything else is a [`ClosureLayoutError`],
//! never a guess and never a panic. A caller should refuse to build, so that
//! a layout this module could not confirm never reaches a GPU run.
//!
//! # API
//!
//! - [`measure`] takes many closures' capture types (each list in **capture
//!   order**: the closure's field index order, `(*_1).0`, `(*_1).1`, … in
//!   MIR) and returns a [`ClosureLayout`] for each, in the same order. One
//!   rustc run and one run of the probe for the whole batch; closures with
//!   the same capture types share one probe.
//! - [`ClosureLayout`] holds, per capture in capture order, its offset, size
//!   and alignment, and the closure's size and alignment.
//!   [`ClosureLayout::offsets`] gives the offsets in capture order,
//!   [`place_captures`] pairs them with capture names in the shape of
//!   `manifest::env::EnvField`, [`ClosureLayout::validate`] checks that a
//!   layout is well-formed, and [`ClosureLayout::capture_bytes`] slices each
//!   capture's bytes out of an image of a closure (such as the bytes the
//!   host reference records), the same function the probe's check uses.
//!
//! # Scope
//!
//! - Only by-value captures of scalars. A non-`move` closure captures a
//!   `Copy` scalar by reference (a `&T` field), which is not measured here.
//! - `f16` and `f128` are unstable, so no stable rustc can build the probe:
//!   they are rejected ([`ClosureLayoutError::Unsupported`]).
//! - The layout belongs to one rustc and one target: the probe is built by
//!   the rustc the bridge runs (`$RUSTC`, else `rustc`) for the host, and
//!   [`Measured::rustc`] names it. A layout measured with one rustc says
//!   nothing about another.
//!
//! docs/closure-layout.md gives the experiment behind the method and its
//! remaining risks.

use std::fmt;
use std::fmt::Write as _;
use std::process::Command;

use crate::layout::{is_stable, measurable, natural};
pub use crate::layout::{
    leaf_name, place_captures, shape_of, CaptureField, ClosureLayout, PlacedCapture, Shape,
    MAX_CAPTURED_SCALARS,
};
use crate::rustc::{self, BridgeError};
use crate::scratch::{self, RunError, Scratch};
use crate::ty::{Scalar, Ty};

/// What [`measure`] checked, so that a caller (and a test) can tell a batch
/// that proved something from one that proved nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Checked {
    /// Distinct capture lists measured (one probe struct and one real
    /// closure each).
    pub probes: usize,
    /// Captured scalars whose place the probe struct and the real closure
    /// agreed on.
    pub captures: usize,
    /// Bytes of the real closures compared with the captured values.
    pub bytes: usize,
}

/// The layouts of a batch, in the order asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    /// `rustc -vV`'s first line and host: the layouts hold for this rustc.
    pub rustc: String,
    pub layouts: Vec<ClosureLayout>,
    pub checked: Checked,
}

#[derive(Debug)]
pub enum ClosureLayoutError {
    /// A capture's type cannot be measured on stable Rust.
    Unsupported {
        closure: usize,
        capture: usize,
        scalar: Scalar,
    },
    /// The captures hold more scalars than [`MAX_CAPTURED_SCALARS`].
    TooLarge {
        closure: usize,
        held: u64,
    },
    /// rustc could not be run, or ran past its time limit.
    Rustc(BridgeError),
    Io(String),
    /// rustc rejected the generated probe: a fault of this module, or a
    /// target it does not support (a 32-bit one).
    ProbeRejected {
        stderr: String,
    },
    /// The probe did not finish normally.
    ProbeFailed {
        status: String,
        stderr: String,
    },
    /// The probe's report could not be read (`line` is 1-based).
    Report {
        line: usize,
        message: String,
    },
    /// A scalar's size is not the one the frontend assumes.
    ScalarSize {
        scalar: Scalar,
        rustc: u64,
        frontend: u64,
    },
    /// The probe struct and the real closure disagree, or the closure's
    /// bytes are not the captured values. `closure` is the index in the
    /// caller's batch (the first with these captures).
    Disagree {
        closure: usize,
        captures: Vec<Shape>,
        what: String,
    },
}

impl fmt::Display for ClosureLayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClosureLayoutError::Unsupported {
                closure,
                capture,
                scalar,
            } => write!(
                f,
                "closure {closure}, capture {capture}: `{}` is unstable, so no stable rustc \
                 can measure the layout of a closure that captures it",
                scalar.name()
            ),
            ClosureLayoutError::TooLarge { closure, held } => write!(
                f,
                "closure {closure} captures {held} scalars; an environment holds at most \
                 {MAX_CAPTURED_SCALARS}"
            ),
            ClosureLayoutError::Rustc(e) => write!(f, "closure layout probe: {e}"),
            ClosureLayoutError::Io(m) => write!(f, "closure layout probe: {m}"),
            ClosureLayoutError::ProbeRejected { stderr } => write!(
                f,
                "rustc rejected the closure layout probe (a fault of \
                 frontend::closure_layout, or a target it does not support):\n{}",
                stderr.trim_end()
            ),
            ClosureLayoutError::ProbeFailed { status, stderr } => write!(
                f,
                "the closure layout probe failed ({status}):\n{}",
                stderr.trim_end()
            ),
            ClosureLayoutError::Report { line, message } => write!(
                f,
                "the closure layout probe's report, line {line}: {message}"
            ),
            ClosureLayoutError::ScalarSize {
                scalar,
                rustc,
                frontend,
            } => write!(
                f,
                "rustc says `{}` is {rustc} bytes, the frontend assumes {frontend} \
                 (64-bit targets only)",
                scalar.name()
            ),
            ClosureLayoutError::Disagree {
                closure,
                captures,
                what,
            } => write!(
                f,
                "closure {closure} (captures {}): {what}; the probe-struct method does not \
                 hold for this rustc, so its closure layout is unknown",
                list(captures)
            ),
        }
    }
}

impl std::error::Error for ClosureLayoutError {}

fn list(captures: &[Shape]) -> String {
    if captures.is_empty() {
        return "none".to_string();
    }
    captures
        .iter()
        .map(Shape::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Measures rustc's layout of closures capturing `closures[i]` (types in
/// capture order: scalars, or aggregates of them) by value, for every `i`,
/// with one rustc run.
pub fn measure<C: AsRef<[T]>, T: Clone + Into<Shape>>(
    closures: &[C],
) -> Result<Measured, ClosureLayoutError> {
    let closures: Vec<Vec<Shape>> = closures
        .iter()
        .map(|c| c.as_ref().iter().cloned().map(Into::into).collect())
        .collect();
    for (closure, captures) in closures.iter().enumerate() {
        for (capture, shape) in captures.iter().enumerate() {
            if let Some(scalar) = shape.scalars().into_iter().find(|s| !is_stable(*s)) {
                return Err(ClosureLayoutError::Unsupported {
                    closure,
                    capture,
                    scalar,
                });
            }
        }
        let held: u64 = captures.iter().map(Shape::leaf_count).sum();
        if held > MAX_CAPTURED_SCALARS {
            return Err(ClosureLayoutError::TooLarge { closure, held });
        }
    }
    // One probe per distinct capture list; `first[p]` is its first closure.
    let mut probes: Vec<Vec<Shape>> = Vec::new();
    let mut first: Vec<usize> = Vec::new();
    let mut probe_of: Vec<usize> = Vec::with_capacity(closures.len());
    let mut index = std::collections::HashMap::new();
    for (closure, captures) in closures.iter().enumerate() {
        let p = *index.entry(captures.clone()).or_insert_with(|| {
            probes.push(captures.clone());
            first.push(closure);
            probes.len() - 1
        });
        probe_of.push(p);
    }
    let rustc = rustc::rustc_version().map_err(ClosureLayoutError::Rustc)?;
    if probes.is_empty() {
        return Ok(Measured {
            rustc,
            layouts: Vec::new(),
            checked: Checked::default(),
        });
    }
    // The report depends only on rustc and the program: built and run
    // once, then read from the build cache (and checked as always).
    let program = probe_program(&probes);
    let key = crate::cached::key(
        "layout-probe",
        &[("rustc", rustc.as_bytes()), ("program", program.as_bytes())],
    );
    let stdout = match crate::cached::get("layout-probe", &key).map(String::from_utf8) {
        Some(Ok(report)) => report,
        _ => {
            let report = run_probe(&program)?;
            crate::cached::put("layout-probe", &key, report.as_bytes());
            report
        }
    };
    let (layouts, checked) = read_report(&probes, &stdout).map_err(|e| match e {
        ClosureLayoutError::Disagree {
            closure,
            captures,
            what,
        } => ClosureLayoutError::Disagree {
            closure: first[closure],
            captures,
            what,
        },
        e => e,
    })?;
    Ok(Measured {
        rustc,
        layouts: probe_of.iter().map(|&p| layouts[p].clone()).collect(),
        checked,
    })
}

/// Builds and runs the probe in a scratch folder; its standard output.
fn run_probe(program: &str) -> Result<String, ClosureLayoutError> {
    let dir = Scratch::new("layout").map_err(ClosureLayoutError::Io)?;
    let source = dir.join("probe.rs");
    std::fs::write(&source, program)
        .map_err(|e| ClosureLayoutError::Io(format!("cannot write {}: {e}", source.display())))?;
    let binary = dir.join("probe");
    let built = rustc::run_rustc(
        Command::new(rustc::rustc())
            .args(["--edition", "2021", "--crate-type", "bin"])
            .args(["--crate-name", "closure_layout_probe"])
            // Layouts do not depend on the optimisation level (measured at
            // 0 and 3, docs/closure-layout.md); 0 builds fastest.
            .args(["-C", "opt-level=0", "-C", "debuginfo=0"])
            .arg(&source)
            .arg("-o")
            .arg(&binary),
        "building the closure layout probe",
        Some(&dir),
    )
    .map_err(ClosureLayoutError::Rustc)?;
    if !built.status.success() {
        return Err(ClosureLayoutError::ProbeRejected {
            stderr: String::from_utf8_lossy(&built.stderr).into_owned(),
        });
    }
    let limit = scratch::timeout().map_err(ClosureLayoutError::Io)?;
    let ran =
        scratch::run(Command::new(&binary).current_dir(dir.path()), limit).map_err(
            |e| match e {
                RunError::Spawn(e) => {
                    ClosureLayoutError::Io(format!("cannot run {}: {e}", binary.display()))
                }
                RunError::Timeout(limit) => ClosureLayoutError::ProbeFailed {
                    status: format!(
                        "stopped after {} s; set {} to allow more seconds",
                        limit.as_secs_f64(),
                        scratch::TIMEOUT_VAR
                    ),
                    stderr: String::new(),
                },
            },
        )?;
    if !ran.status.success() {
        return Err(ClosureLayoutError::ProbeFailed {
            status: ran.status.to_string(),
            stderr: String::from_utf8_lossy(&ran.stderr).into_owned(),
        });
    }
    String::from_utf8(ran.stdout).map_err(|_| ClosureLayoutError::Report {
        line: 1,
        message: "not UTF-8".to_string(),
    })
}

/// The scalars the probe reports the size and alignment of.
fn stable_scalars() -> impl Iterator<Item = Scalar> {
    Scalar::ALL.into_iter().filter(|&s| is_stable(s))
}

/// The bytes of capture `k`'s value in the probe: distinct for every
/// capture of a closure (for the first fifteen; a byte check of more only
/// repeats patterns), never a padding-like run of zeros. `char` keeps a
/// valid scalar value and `bool` is 0 or 1. Native byte order: the probe
/// runs on this machine.
fn value_bytes(k: usize, scalar: Scalar) -> Vec<u8> {
    let tag = ((k + 1) * 16) as u8;
    match scalar {
        Scalar::Bool => vec![u8::from(k.is_multiple_of(2))],
        Scalar::Char => char_code(k).to_ne_bytes().to_vec(),
        _ => (0..scalar.size() as u8)
            .map(|j| tag.wrapping_add(j))
            .collect(),
    }
}

/// Below 0x110000 and outside the surrogates (whose second byte is 0xD8 to
/// 0xDF, never `tag + 1`).
fn char_code(k: usize) -> u32 {
    let tag = ((k + 1) * 16) as u8 as u32;
    (((k % 16) as u32) << 16) | ((tag + 1) << 8) | tag
}

/// A Rust expression of capture `k`'s value, whose bytes are [`value_bytes`].
fn value_literal(k: usize, scalar: Scalar) -> String {
    match scalar {
        Scalar::Bool => k.is_multiple_of(2).to_string(),
        Scalar::Char => format!("'\\u{{{:x}}}'", char_code(k)),
        _ => format!(
            "{}::from_ne_bytes({:?})",
            scalar.name(),
            value_bytes(k, scalar)
        ),
    }
}

/// The report function every probe calls: non-generic, so that the program
/// compiles fast. Offsets from addresses that fall outside the object print
/// as `?`; the image holds the object's bytes at the fields' offsets and
/// zeros elsewhere (padding is never read: it is uninitialised).
const PRELUDE: &str = r#"// Generated by frontend::closure_layout: rustc's layout of closures,
// measured by a probe struct (offset_of!) and by the real closure.
#![allow(dead_code)]
use std::fmt::Write as _;
use std::io::Write as _;
use core::mem::{align_of, align_of_val, offset_of, size_of, size_of_val};
use core::ptr::addr_of;

#[allow(clippy::too_many_arguments)]
fn report(
    out: &mut String,
    index: usize,
    probe: &[usize],
    probe_size: usize,
    probe_align: usize,
    base: *const u8,
    size: usize,
    align: usize,
    addrs: &[usize],
    leaves: &[(usize, usize, usize)],
) {
    let _ = write!(out, "closure {index} probe {probe_size} {probe_align}");
    for o in probe {
        let _ = write!(out, " {o}");
    }
    let _ = write!(out, " real {size} {align}");
    let starts: Vec<Option<usize>> = addrs
        .iter()
        .map(|a| a.checked_sub(base as usize).filter(|&o| o <= size))
        .collect();
    for o in &starts {
        match o {
            Some(o) => {
                let _ = write!(out, " {o}");
            }
            None => out.push_str(" ?"),
        }
    }
    let mut image = vec![0u8; size];
    for &(capture, offset, n) in leaves {
        if let Some(start) = starts[capture].map(|s| s + offset).filter(|s| s + n <= size) {
            for j in start..start + n {
                // SAFETY: inside the object, within a captured scalar.
                image[j] = unsafe { base.add(j).read() };
            }
        }
    }
    out.push_str(" bytes ");
    if image.is_empty() {
        out.push('-');
    }
    for b in image {
        let _ = write!(out, "{b:02x}");
    }
    out.push_str(" leaves");
    for &(_, offset, _) in leaves {
        let _ = write!(out, " {offset}");
    }
    out.push('\n');
}
"#;

/// How the probe names the aggregates it measures: tuples and arrays as
/// Rust spells them, a struct or closure as a tuple struct `S{n}` of its
/// field types (with the struct's `#[repr(…)]`), defined once each.
#[derive(Default)]
struct Spelling {
    structs: Vec<Shape>,
    defs: String,
}

impl Spelling {
    fn ty(&mut self, shape: &Shape) -> String {
        match shape {
            Shape::Scalar(s) => s.name().to_string(),
            Shape::Tuple(parts) => {
                let parts: Vec<String> = parts.iter().map(|p| self.ty(p)).collect();
                tuple(&parts)
            }
            Shape::Array(e, n) => format!("[{}; {n}]", self.ty(e)),
            Shape::Struct { fields, .. } | Shape::Closure(fields) => {
                if let Some(i) = self.structs.iter().position(|s| s == shape) {
                    return format!("S{i}");
                }
                let parts: Vec<String> = fields.iter().map(|p| self.ty(p)).collect();
                let i = self.structs.len();
                self.structs.push(shape.clone());
                if let Shape::Struct { repr, .. } = shape {
                    if !repr.is_empty() {
                        let _ = writeln!(self.defs, "#[repr({})]", repr.join(", "));
                    }
                }
                let _ = writeln!(self.defs, "struct S{i}({});", parts.join(", "));
                format!("S{i}")
            }
        }
    }

    /// An expression of the offset of the scalar at `path` inside a value
    /// of `shape` (spelled `ty`).
    fn offset(&mut self, shape: &Shape, path: &[u32]) -> String {
        let Some((&i, rest)) = path.split_first() else {
            return "0".to_string();
        };
        let ty = self.ty(shape);
        match shape {
            Shape::Scalar(_) => "0".to_string(),
            Shape::Array(e, _) => {
                let inner = self.offset(e, rest);
                format!("{i} * size_of::<{}>() + {inner}", self.ty(e))
            }
            Shape::Tuple(parts) | Shape::Struct { fields: parts, .. } | Shape::Closure(parts) => {
                let inner = self.offset(&parts[i as usize], rest);
                format!("offset_of!({ty}, {i}) + {inner}")
            }
        }
    }

    /// An expression of a value of `shape` whose scalars are, in field
    /// order, those of [`value_literal`] from `*k` on. A closure shape is a
    /// real closure that captures its parts, each mentioned once in order.
    fn value(&mut self, shape: &Shape, k: &mut usize) -> String {
        match shape {
            Shape::Scalar(s) => {
                *k += 1;
                value_literal(*k - 1, *s)
            }
            Shape::Tuple(parts) => {
                let parts: Vec<String> = parts.iter().map(|p| self.value(p, k)).collect();
                tuple(&parts)
            }
            Shape::Array(e, n) => {
                let parts: Vec<String> = (0..*n).map(|_| self.value(e, k)).collect();
                format!("[{}]", parts.join(", "))
            }
            Shape::Struct { fields, .. } => {
                let ty = self.ty(shape);
                let parts: Vec<String> = fields.iter().map(|p| self.value(p, k)).collect();
                format!("{ty}({})", parts.join(", "))
            }
            Shape::Closure(parts) => {
                let mut s = String::from("{ ");
                let mut uses = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    let _ = write!(s, "let a{j} = {}; ", self.value(p, k));
                    uses.push(format!("&a{j}"));
                }
                let _ = write!(s, "move || {{ let _ = {}; }} }}", tuple(&uses));
                s
            }
        }
    }
}

/// A tuple type or value of `parts` (`()`, `(a,)`, `(a, b)`).
fn tuple(parts: &[String]) -> String {
    match parts {
        [one] => format!("({one},)"),
        _ => format!("({})", parts.join(", ")),
    }
}

/// The probe program for `probes`, each a list of capture shapes of
/// stable scalars.
fn probe_program(probes: &[Vec<Shape>]) -> String {
    let mut spell = Spelling::default();
    let mut body = String::new();
    for (p, shapes) in probes.iter().enumerate() {
        let s = &mut body;
        let n = shapes.len();
        let names: Vec<String> = shapes.iter().map(|t| spell.ty(t)).collect();
        if n == 0 {
            let _ = writeln!(s, "\nstruct P{p};");
        } else {
            let _ = writeln!(s, "\nstruct P{p}({});", names.join(", "));
        }
        let _ = writeln!(s, "fn c{p}(out: &mut String) {{");
        let mut k = 0;
        for (c, t) in shapes.iter().enumerate() {
            let _ = writeln!(s, "    let v{c} = {};", spell.value(t, &mut k));
        }
        // Each capture mentioned once, whole, in capture order.
        let _ = writeln!(s, "    let c = move |o: &mut [usize; {n}]| {{");
        for c in 0..n {
            let _ = writeln!(s, "        o[{c}] = addr_of!(v{c}) as usize;");
        }
        if n == 0 {
            let _ = writeln!(s, "        let _ = o;");
        }
        let _ = writeln!(s, "    }};");
        let _ = writeln!(s, "    let mut o = [0usize; {n}];");
        let _ = writeln!(s, "    c(&mut o);");
        let offsets: Vec<String> = (0..n).map(|c| format!("offset_of!(P{p}, {c})")).collect();
        let mut leaves = Vec::new();
        for (c, t) in shapes.iter().enumerate() {
            for (path, scalar) in t.leaves() {
                leaves.push(format!(
                    "({c}, {}, {})",
                    spell.offset(t, &path),
                    scalar.size()
                ));
            }
        }
        let _ = writeln!(
            s,
            "    report(out, {p}, &[{}], size_of::<P{p}>(), align_of::<P{p}>(), \
             addr_of!(c).cast::<u8>(), size_of_val(&c), align_of_val(&c), &o, &[{}]);",
            offsets.join(", "),
            leaves.join(", ")
        );
        let _ = writeln!(s, "}}");
    }
    let mut s = String::from(PRELUDE);
    if !spell.defs.is_empty() {
        s.push('\n');
        s.push_str(&spell.defs);
    }
    s.push_str(&body);
    s.push_str("\nfn main() {\n    let mut out = String::new();\n");
    for t in stable_scalars() {
        let name = t.name();
        let _ = writeln!(
            s,
            "    let _ = writeln!(out, \"scalar {name} {{}} {{}}\", size_of::<{name}>(), align_of::<{name}>());"
        );
    }
    for p in 0..probes.len() {
        let _ = writeln!(s, "    c{p}(&mut out);");
    }
    let _ = writeln!(
        s,
        "    let _ = writeln!(out, \"end {}\");\n    std::io::stdout().write_all(out.as_bytes()).unwrap();\n}}",
        probes.len()
    );
    s
}

/// Reads the probe's report for `probes` and checks it. Errors name the
/// probe's index as the closure.
fn read_report(
    probes: &[Vec<Shape>],
    report: &str,
) -> Result<(Vec<ClosureLayout>, Checked), ClosureLayoutError> {
    let mut lines = report.lines().enumerate().map(|(i, l)| (i + 1, l));
    let mut next = |what: &str| {
        lines.next().ok_or_else(|| ClosureLayoutError::Report {
            line: report.lines().count() + 1,
            message: format!("the report ends where {what} was expected"),
        })
    };
    let mut scalars = std::collections::HashMap::new();
    for t in stable_scalars() {
        let (line, text) = next(&format!("the size of `{}`", t.name()))?;
        let mut r = Reader::new(line, text);
        r.word("scalar")?;
        r.word(t.name())?;
        let (size, align) = (r.number()?, r.number()?);
        r.end()?;
        if size != t.size() {
            return Err(ClosureLayoutError::ScalarSize {
                scalar: t,
                rustc: size,
                frontend: t.size(),
            });
        }
        scalars.insert(t, (size, align));
    }
    let mut layouts = Vec::with_capacity(probes.len());
    let mut checked = Checked::default();
    for (p, types) in probes.iter().enumerate() {
        let (line, text) = next(&format!("closure {p}"))?;
        let disagree = |what: String| ClosureLayoutError::Disagree {
            closure: p,
            captures: types.clone(),
            what,
        };
        let mut r = Reader::new(line, text);
        r.word("closure")?;
        r.word(&p.to_string())?;
        r.word("probe")?;
        let (probe_size, probe_align) = (r.number()?, r.number()?);
        let probe: Vec<u64> = types.iter().map(|_| r.number()).collect::<Result<_, _>>()?;
        r.word("real")?;
        let (size, align) = (r.number()?, r.number()?);
        let real: Vec<Option<u64>> = types
            .iter()
            .map(|_| r.number_or_unknown())
            .collect::<Result<_, _>>()?;
        r.word("bytes")?;
        let image = r.hex()?;
        r.word("leaves")?;
        let leaves: Vec<(usize, Vec<u32>, Scalar)> = types
            .iter()
            .enumerate()
            .flat_map(|(c, t)| t.leaves().into_iter().map(move |(p, s)| (c, p, s)))
            .collect();
        let inner: Vec<u64> = leaves
            .iter()
            .map(|_| r.number())
            .collect::<Result<_, _>>()?;
        r.end()?;

        if (probe_size, probe_align) != (size, align) {
            return Err(disagree(format!(
                "the probe struct has size {probe_size} and alignment {probe_align}, \
                 the closure {size} and {align}"
            )));
        }
        for (k, (&o, &r)) in probe.iter().zip(&real).enumerate() {
            match r {
                Some(r) if r == o => {}
                Some(r) => {
                    return Err(disagree(format!(
                        "capture {k} ({}) is at offset {o} in the probe struct and at \
                         offset {r} in the closure",
                        types[k].name()
                    )))
                }
                None => {
                    return Err(disagree(format!(
                        "capture {k} ({}) has an address outside the closure object",
                        types[k].name()
                    )))
                }
            }
        }
        let layout = ClosureLayout {
            fields: leaves
                .iter()
                .zip(&inner)
                .map(|((capture, path, scalar), &at)| {
                    let (size, align) = scalars[scalar];
                    CaptureField {
                        capture: *capture,
                        path: path.clone(),
                        scalar: *scalar,
                        offset: probe[*capture] + at,
                        size,
                        align,
                    }
                })
                .collect(),
            captures: probe.clone(),
            size,
            align,
        };
        layout.validate().map_err(disagree)?;
        if image.len() as u64 != size {
            return Err(ClosureLayoutError::Report {
                line,
                message: format!("{} bytes for a closure of {size}", image.len()),
            });
        }
        let found = layout.capture_bytes(&image).map_err(disagree)?;
        for (k, (f, bytes)) in layout.fields.iter().zip(found).enumerate() {
            let value = value_bytes(k, f.scalar);
            if bytes != value.as_slice() {
                return Err(disagree(format!(
                    "{} at offset {} holds bytes {}, the captured value's are {}",
                    f.describe(),
                    f.offset,
                    hex(bytes),
                    hex(&value)
                )));
            }
            checked.bytes += bytes.len();
        }
        checked.probes += 1;
        checked.captures += layout.fields.len();
        layouts.push(layout);
    }
    let (line, text) = next("the end")?;
    let mut r = Reader::new(line, text);
    r.word("end")?;
    r.word(&probes.len().to_string())?;
    r.end()?;
    if let Some((line, _)) = lines.next() {
        return Err(ClosureLayoutError::Report {
            line,
            message: "text after the end".to_string(),
        });
    }
    Ok((layouts, checked))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads one line of the report, token by token.
struct Reader<'a> {
    line: usize,
    tokens: std::str::SplitAsciiWhitespace<'a>,
}

impl<'a> Reader<'a> {
    fn new(line: usize, text: &'a str) -> Reader<'a> {
        Reader {
            line,
            tokens: text.split_ascii_whitespace(),
        }
    }

    fn error(&self, message: String) -> ClosureLayoutError {
        ClosureLayoutError::Report {
            line: self.line,
            message,
        }
    }

    fn token(&mut self, what: &str) -> Result<&'a str, ClosureLayoutError> {
        self.tokens
            .next()
            .ok_or_else(|| self.error(format!("the line ends where {what} was expected")))
    }

    fn word(&mut self, word: &str) -> Result<(), ClosureLayoutError> {
        let t = self.token(&format!("`{word}`"))?;
        if t == word {
            Ok(())
        } else {
            Err(self.error(format!("`{t}` where `{word}` was expected")))
        }
    }

    fn number(&mut self) -> Result<u64, ClosureLayoutError> {
        let t = self.token("a number")?;
        t.parse()
            .map_err(|_| self.error(format!("`{t}` where a number was expected")))
    }

    fn number_or_unknown(&mut self) -> Result<Option<u64>, ClosureLayoutError> {
        let t = self.token("an offset")?;
        if t == "?" {
            return Ok(None);
        }
        t.parse()
            .map(Some)
            .map_err(|_| self.error(format!("`{t}` where an offset was expected")))
    }

    fn hex(&mut self) -> Result<Vec<u8>, ClosureLayoutError> {
        let t = self.token("bytes")?;
        if t == "-" {
            return Ok(Vec::new());
        }
        if t.len() % 2 != 0 {
            return Err(self.error(format!("`{t}` is not whole bytes")));
        }
        (0..t.len())
            .step_by(2)
            .map(|i| {
                t.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
                    .ok_or_else(|| self.error(format!("`{t}` is not hexadecimal")))
            })
            .collect()
    }

    fn end(&mut self) -> Result<(), ClosureLayoutError> {
        match self.tokens.next() {
            None => Ok(()),
            Some(t) => Err(self.error(format!("unexpected `{t}`"))),
        }
    }
}

/// The layout of a closure holding `captures` in that order, when it needs
/// no measurement: none, or one scalar (a one-field object is the field).
fn trivial(captures: &[Shape]) -> Option<ClosureLayout> {
    match captures {
        [] => Some(ClosureLayout {
            fields: Vec::new(),
            captures: Vec::new(),
            size: 0,
            align: 1,
        }),
        [Shape::Scalar(s)] => {
            let (size, align) = natural(*s);
            Some(ClosureLayout {
                fields: vec![CaptureField {
                    capture: 0,
                    path: Vec::new(),
                    scalar: *s,
                    offset: 0,
                    size,
                    align,
                }],
                captures: vec![0],
                size,
                align,
            })
        }
        _ => None,
    }
}

/// Records rustc's layout in every closure of `doc` whose captures are all
/// by-value scalars or aggregates of them (`Closure::layout`), measuring
/// the closures that need it in one probe run. The doc's rustc must be the
/// one the probe is built with: a layout belongs to one rustc.
pub fn record(doc: &mut crate::pmir::PreparedMir) -> Result<Checked, ClosureLayoutError> {
    doc.elements.clear();
    let elements = composite_elements(doc);
    let mut wanted: Vec<(usize, Vec<Shape>)> = Vec::new();
    for i in 0..doc.closures.len() {
        doc.closures[i].layout = None;
        // A `par_iter` chain is `#[repr(C)]` around its closures: laid out
        // from theirs once they are measured.
        if crate::chain::is_chain_closure(&doc.closures[i].ty) {
            continue;
        }
        if let Some(captures) = measurable(&doc.closures[i], doc) {
            match trivial(&captures) {
                Some(l) => doc.closures[i].layout = Some(object_layout(&l)),
                None => wanted.push((i, captures)),
            }
        }
    }
    if wanted.is_empty() && elements.is_empty() {
        chain_layouts(doc);
        return Ok(Checked::default());
    }
    // A composite element is measured as a closure capturing one value of
    // it, in the same probe run.
    let lists: Vec<&[Shape]> = wanted
        .iter()
        .map(|(_, c)| c.as_slice())
        .chain(elements.iter().map(|(_, s)| std::slice::from_ref(s)))
        .collect();
    let measured = measure(&lists)?;
    if let Some(doc_rustc) = &doc.source.rustc {
        if first_line(doc_rustc) != first_line(&measured.rustc) {
            return Err(ClosureLayoutError::Io(format!(
                "the MIR was made by `{}`, the layout probe by `{}`: a closure's layout \
                 belongs to one rustc",
                first_line(doc_rustc),
                first_line(&measured.rustc)
            )));
        }
    }
    for ((i, _), l) in wanted.iter().zip(&measured.layouts) {
        doc.closures[*i].layout = Some(object_layout(l));
    }
    for ((ty, _), l) in elements.iter().zip(&measured.layouts[wanted.len()..]) {
        doc.elements.push(crate::pmir::ElementLayout {
            ty: ty.clone(),
            layout: object_layout(l),
        });
    }
    chain_layouts(doc);
    Ok(measured.checked)
}

/// The tuples and structs that registrations' callbacks take or return (a
/// reference's referent for a comparator's or a key's `&T`), each once, in
/// the order first met, with their shapes: scalars, tuples and structs of
/// them, nested. Arrays, closures and everything else are left out (no
/// element type: admission says so). Of a `par_iter` chain's or a
/// by-key's synthesized body, its element types
/// (`chain::element_types`): its closures' own types are not elements.
fn composite_elements(doc: &crate::pmir::PreparedMir) -> Vec<(Ty, Shape)> {
    fn plain(s: &Shape) -> bool {
        match s {
            Shape::Scalar(_) => true,
            Shape::Tuple(parts) | Shape::Struct { fields: parts, .. } => parts.iter().all(plain),
            Shape::Array(..) | Shape::Closure(_) => false,
        }
    }
    let mut out: Vec<(Ty, Shape)> = Vec::new();
    for r in &doc.registrations {
        let types: Vec<Ty> = match &r.callback {
            crate::pmir::Callback::Closure { body } => match doc.closure(body) {
                Some(c) if crate::chain::is_chain_closure(&c.ty) => crate::chain::element_types(c),
                Some(c) => c.params.iter().chain([&c.ret]).cloned().collect(),
                _ => continue,
            },
            crate::pmir::Callback::FnItem { body } => match doc.body(body) {
                Some(b) => {
                    let n = b.arg_count as usize;
                    b.locals.iter().take(n + 1).map(|l| l.ty.clone()).collect()
                }
                None => continue,
            },
            crate::pmir::Callback::Other { .. } => continue,
        };
        for t in types {
            let t = match t {
                Ty::Ref {
                    mutable: false,
                    inner,
                } => *inner,
                t => t,
            };
            if !matches!(t, Ty::Tuple(_) | Ty::Adt { .. }) || out.iter().any(|(o, _)| *o == t) {
                continue;
            }
            if let Some(shape) = crate::layout::shape_of(&t, doc, 0).filter(plain) {
                out.push((t, shape));
            }
        }
    }
    out
}

/// Every `par_iter` chain's layout, from its closures' (`chain::layout_of`).
fn chain_layouts(doc: &mut crate::pmir::PreparedMir) {
    for i in 0..doc.closures.len() {
        if crate::chain::is_chain_closure(&doc.closures[i].ty) {
            doc.closures[i].layout = crate::chain::layout_of(&doc.closures[i], &doc.closures);
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

fn object_layout(l: &ClosureLayout) -> crate::pmir::ObjectLayout {
    crate::pmir::ObjectLayout {
        size: l.size,
        align: l.align,
        offsets: l.offsets(),
        leaves: l
            .fields
            .iter()
            .filter(|f| !f.path.is_empty())
            .map(|f| crate::pmir::LeafLayout {
                capture: f.capture as u32,
                path: f.path.clone(),
                ty: Ty::Scalar(f.scalar),
                offset: f.offset,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Scalar::*;

    fn probes() -> Vec<Vec<Shape>> {
        let scalars = |list: &[Scalar]| list.iter().map(|&s| Shape::Scalar(s)).collect();
        vec![
            scalars(&[U8, U16, U32, F64, I8, I64, U16]),
            scalars(&[]),
            scalars(&[Bool, Char]),
        ]
    }

    /// The real probe's report for [`probes`].
    fn real_report() -> String {
        run_probe(&probe_program(&probes())).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `report` with token `token` of the line starting `closure {p} ` replaced.
    fn tamper(report: &str, p: usize, token: usize, with: &str) -> String {
        report
            .lines()
            .map(|l| {
                if !l.starts_with(&format!("closure {p} ")) {
                    return l.to_string();
                }
                let mut t: Vec<&str> = l.split(' ').collect();
                t[token] = with;
                t.join(" ")
            })
            .map(|l| l + "\n")
            .collect()
    }

    fn refusal(report: &str) -> String {
        match read_report(&probes(), report) {
            Ok(_) => panic!("a tampered report was accepted:\n{report}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_real_report_is_read_and_every_tampering_is_refused() {
        let report = real_report();
        let (layouts, checked) = read_report(&probes(), &report).unwrap();
        assert_eq!(layouts[0].offsets(), [24, 20, 16, 0, 25, 8, 22]);
        assert_eq!(
            checked,
            Checked {
                probes: 3,
                captures: 9,
                bytes: 26 + 5
            }
        );
        // closure 0: tokens 3, 4 probe size and align; 5..12 probe offsets;
        // 12 `real`; 13, 14 size and align; 15..22 offsets; 22 `bytes`; 23 image.
        let image_of = |p: usize| {
            let line = report
                .lines()
                .find(|l| l.starts_with(&format!("closure {p} ")));
            let tokens: Vec<&str> = line.unwrap().split(' ').collect();
            let at = tokens.iter().position(|t| *t == "bytes").unwrap();
            tokens[at + 1].to_string()
        };
        // closure 2: `bool` at offset 4, image token 13.
        let mut bool_false = image_of(2);
        bool_false.replace_range(8..10, "00");
        let cases = [
            (tamper(&report, 0, 16, "16"), "capture 1 (u16) is at offset 20 in the probe struct and at offset 16 in the closure"),
            (tamper(&report, 0, 5, "23"), "capture 0 (u8) is at offset 23 in the probe struct and at offset 24 in the closure"),
            (tamper(&report, 0, 3, "40"), "the probe struct has size 40 and alignment 8, the closure 32 and 8"),
            (tamper(&report, 0, 14, "16"), "the probe struct has size 32 and alignment 8, the closure 32 and 16"),
            (tamper(&report, 0, 21, "?"), "capture 6 (u16) has an address outside the closure object"),
            (tamper(&report, 2, 13, &bool_false), "capture 0 (bool) at offset 4 holds bytes 00, the captured value's are 01"),
            (tamper(&report, 0, 25, "1"), "captures 0 (u8) and 4 (i8) overlap (offsets 25 and 25)"),
            (tamper(&report, 0, 24, "leaf"), "`leaf` where `leaves` was expected"),
            (tamper(&report, 0, 5, "x"), "line 17: `x` where a number was expected"),
            (tamper(&report, 1, 1, "7"), "`7` where `1` was expected"),
            (report.replace("end 3\n", ""), "the report ends where the end was expected"),
            (report.clone() + "more\n", "text after the end"),
            (report.replace("scalar usize 8 8", "scalar usize 4 4"), "rustc says `usize` is 4 bytes, the frontend assumes 8"),
        ];
        for (text, expected) in cases {
            let e = refusal(&text);
            assert!(e.contains(expected), "expected `{expected}` in: {e}");
        }
        // The image of closure 0, one byte changed at a time: every byte of
        // every capture is compared, and the padding (offsets 26 to 31) is not.
        let image = image_of(0);
        for at in 0..32 {
            let mut bytes = image.as_bytes().to_vec();
            bytes[2 * at] = if bytes[2 * at] == b'f' { b'e' } else { b'f' };
            let changed = String::from_utf8(bytes).unwrap();
            let text = tamper(&report, 0, 23, &changed);
            let read = read_report(&probes(), &text);
            assert_eq!(read.is_ok(), at >= 26, "byte {at}: {read:?}");
        }
    }

    #[test]
    fn aggregates_are_measured_scalar_by_scalar() {
        let sc = |list: &[Scalar]| list.iter().map(|&s| Shape::Scalar(s)).collect::<Vec<_>>();
        let pair = Shape::Tuple(sc(&[I32, U8]));
        let array = Shape::Array(Box::new(Shape::Scalar(F32)), 3);
        let c_struct = Shape::Struct {
            path: "P".into(),
            repr: vec!["C".into()],
            fields: sc(&[U8, F64, U16]),
        };
        let plain = Shape::Struct {
            path: "Q".into(),
            repr: vec![],
            fields: sc(&[U8, F64, U16]),
        };
        let inner = Shape::Closure(sc(&[U8, F64, Bool]));
        let nested = Shape::Tuple(vec![inner.clone(), array.clone(), Shape::Scalar(Char)]);
        let captures = vec![
            Shape::Scalar(U16),
            pair,
            array,
            c_struct,
            plain,
            inner,
            nested,
        ];
        let measured = measure(std::slice::from_ref(&captures)).unwrap_or_else(|e| panic!("{e}"));
        let l = &measured.layouts[0];
        let within = |c: usize| -> Vec<u64> {
            l.fields
                .iter()
                .filter(|f| f.capture == c)
                .map(|f| f.offset - l.captures[c])
                .collect()
        };
        assert_eq!(within(2), [0, 4, 8], "array elements are one f32 apart");
        assert_eq!(within(3), [0, 8, 16], "repr(C) keeps declaration order");
        assert_eq!(within(4), [10, 0, 8], "a default-repr struct is reordered");
        let leaves: u64 = captures.iter().map(Shape::leaf_count).sum();
        assert_eq!(l.fields.len() as u64, leaves);
        assert_eq!(measured.checked.captures as u64, leaves);
        assert_eq!(
            l.fields.iter().map(|f| f.size).sum::<u64>(),
            measured.checked.bytes as u64
        );
        // The names an environment gives them, and the record read back.
        let names: Vec<(String, Shape)> = captures
            .iter()
            .enumerate()
            .map(|(k, s)| (format!("v{k}"), s.clone()))
            .collect();
        let placed = place_captures(&names, l).unwrap();
        assert_eq!(placed[1].name, "v1.0");
        assert_eq!(placed.last().unwrap().name, "v6.2");
        assert_eq!(placed[placed.len() - 2].name, "v6.1.2");
        let recorded = object_layout(l);
        assert_eq!(
            ClosureLayout::of_recorded(&captures, &recorded).as_ref(),
            Ok(l)
        );
        let mut shifted = recorded.clone();
        shifted.leaves[0].path = vec![1];
        assert!(ClosureLayout::of_recorded(&captures, &shifted).is_err());
    }

    #[test]
    fn disagreements_name_the_closure_of_the_callers_batch() {
        let e = ClosureLayoutError::Disagree {
            closure: 4,
            captures: vec![Shape::Scalar(U8), Shape::Scalar(I64)],
            what:
                "capture 0 (u8) is at offset 8 in the probe struct and at offset 0 in the closure"
                    .to_string(),
        };
        assert_eq!(
            e.to_string(),
            "closure 4 (captures u8, i64): capture 0 (u8) is at offset 8 in the probe struct and \
             at offset 0 in the closure; the probe-struct method does not hold for this rustc, \
             so its closure layout is unknown"
        );
    }

    fn field(scalar: Scalar, offset: u64) -> CaptureField {
        let size = scalar.size();
        CaptureField {
            capture: 0,
            path: Vec::new(),
            scalar,
            offset,
            size,
            align: size,
        }
    }

    /// A layout of scalar captures, `fields` in capture order.
    fn of_scalars(fields: Vec<CaptureField>, size: u64, align: u64) -> ClosureLayout {
        let fields: Vec<CaptureField> = fields
            .into_iter()
            .enumerate()
            .map(|(capture, f)| CaptureField { capture, ..f })
            .collect();
        ClosureLayout {
            captures: fields.iter().map(|f| f.offset).collect(),
            fields,
            size,
            align,
        }
    }

    #[test]
    fn validate_refuses_malformed_layouts() {
        let layout = of_scalars;
        let good = layout(vec![field(U8, 8), field(I64, 0)], 16, 8);
        assert_eq!(good.validate(), Ok(()));
        let cases = [
            (layout(vec![field(U8, 4), field(U32, 4)], 8, 4), "overlap"),
            (layout(vec![field(U32, 2)], 8, 4), "not aligned"),
            (layout(vec![field(U64, 8)], 8, 8), "ends past"),
            (layout(vec![field(U64, 0)], 8, 4), "not aligned"),
            (layout(vec![field(U8, 0)], 3, 2), "not a multiple"),
            (layout(vec![], 0, 3), "not a power of two"),
        ];
        for (l, expected) in cases {
            let e = l.validate().unwrap_err();
            assert!(e.contains(expected), "{l:?}: {e}");
        }
    }

    #[test]
    fn capture_bytes_slices_in_capture_order() {
        let l = of_scalars(vec![field(U8, 2), field(U16, 0)], 4, 2);
        let image = [1, 2, 3, 4];
        assert_eq!(l.capture_bytes(&image).unwrap(), [&[3][..], &[1, 2][..]]);
        assert!(l.capture_bytes(&image[..3]).is_err());
    }

    #[test]
    fn values_are_distinct_and_chars_valid() {
        for k in 0..40 {
            assert!(char::from_u32(char_code(k)).is_some(), "{k}");
            assert_eq!(value_bytes(k, Char), char_code(k).to_ne_bytes());
        }
        let wide: Vec<Vec<u8>> = (0..15).map(|k| value_bytes(k, U128)).collect();
        for a in 0..15 {
            for b in 0..a {
                assert!(wide[a].iter().all(|x| !wide[b].contains(x)), "{a} {b}");
            }
        }
    }
}
