//! A generator of random well-typed callbacks for differential testing.
//!
//! A file is a set of `pub fn entryN(data: &[i32], captures…) -> i32` that
//! each hand one `move` closure of type `(i32, i32) -> i32` to
//! `native::reduce`. Closures are expression trees over scalar locals
//! (`i8`…`u64`, `f32`, `f64`, `bool`), `as` casts, operators, the core
//! methods of [`frontend::registry::CORE_OPS`] (so the generator follows the
//! capability table), `if`/`else`, `while` loops with bounded counters,
//! `for` loops over ranges (`..`, `..=`, `.rev()`, `.step_by()`) and
//! iterator chains over them with closures (`fold`, `any`, `all`,
//! `position`, `map(…).sum()` of floats, `filter(…).count()`), local helper
//! `fn`s, enums as values (`match` on `Ordering` from `cmp`, `total_cmp` and
//! `partial_cmp`, `if let Some(..)` of a `checked_*`, and enums of the
//! file's own with payloads, built and matched), and captures of several
//! types: scalars, and tuples and `Copy` structs of them captured whole.
//!
//! Everything is chosen so that the rustc-built host reference cannot panic
//! on any input, with or without overflow checks: integer arithmetic is
//! `wrapping_*`/`saturating_*`, divisors are `| 1`, exponents are masked,
//! `clamp` bounds are ordered literals. A panic would kill the host
//! reference the GPU results are compared with.
//!
//! Reproducible: callback `i` of seed `s` depends only on `(s, i)` (its own
//! helpers included), so a failing callback can be regenerated alone.

use frontend::registry::{CoreKind, CORE_OPS};
use frontend::ty::Scalar;

/// SplitMix64: tiny, fixed, and the same on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// The scalar types callbacks use.
pub const TYPES: [Scalar; 11] = [
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::U8,
    Scalar::U16,
    Scalar::U32,
    Scalar::U64,
    Scalar::F32,
    Scalar::F64,
    Scalar::Bool,
];

fn is_int(t: Scalar) -> bool {
    t.is_int()
}

fn is_float(t: Scalar) -> bool {
    matches!(t, Scalar::F32 | Scalar::F64)
}

fn bits(t: Scalar) -> u32 {
    match t {
        Scalar::I8 | Scalar::U8 => 8,
        Scalar::I16 | Scalar::U16 => 16,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
        _ => 64,
    }
}

/// Methods of the table the generator does not draw. The float methods
/// that are inherent methods of `std`, not `core` (`f32::<impl f32>::sqrt`),
/// keep generated files free of std; the table lists them for both their
/// method and their intrinsic spellings (`sqrtf32`…), and case files cover
/// them. `from_bits` is an associated function, not a method of a value.
/// `methods_in_table_are_generated` checks every other method is drawn.
/// The transcendental functions are std's too (libdevice on the device),
/// and their results are not bit for bit the host's (docs/gpu.md, "Float
/// math"): a generated file compares results exactly. The integer roots
/// and logarithms panic on values ≤ 0 (`isqrt` on negative ones) and
/// return `u32` or an `Option`, shapes the generator does not make; the
/// case file `tests/verdicts/int_roots_logs.rs` and examples/gpu-rust
/// cover them.
pub const UNDRAWN: [&str; 41] = [
    "exp",
    "exp2",
    "exp_m1",
    "ln",
    "ln_1p",
    "log",
    "log2",
    "log10",
    "powf",
    "powi",
    "cbrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "hypot",
    "sqrt",
    "floor",
    "ceil",
    "round",
    "trunc",
    "mul_add",
    "recip",
    "round_ties_even",
    "fract",
    "from_bits",
    "isqrt",
    "checked_isqrt",
    "ilog2",
    "ilog10",
    "checked_ilog2",
    "checked_ilog10",
];

/// What a core method takes besides its receiver, and what it returns.
enum Shape {
    /// `x.m(y)`, `y: Self`, returns Self.
    Same,
    /// `x.m(y | 1)`: a divisor, never zero.
    Divisor,
    /// `x.m(e)` with `e: u32` masked to `mask`.
    U32Arg(u32),
    /// `x.m(e).unwrap_or(x)`: an `Option` of Self, `e` masked to `mask`.
    CheckedU32(u32),
    /// `x.m(e).0`: the first of a `(Self, bool)`, `e` masked to `mask`.
    OverflowingU32(u32),
    /// `x.m(y | 1).0`: the first of a `(Self, bool)`, a divisor never zero.
    OverflowingDivisor,
    /// `x.m(y)` with a positive divisor (never zero, never -1).
    PositiveDivisor,
    /// `x.m()` returning `ret`, or Self when `None`.
    Unary(Option<Scalar>),
    /// `x.m(y)` returning `ret`.
    BinaryTo(Scalar),
    /// `x.m(lo, hi)` with ordered literals.
    Clamp,
    /// `x.m(y, z)`, all Self.
    Ternary,
}

/// The shape of a method of the table on receiver `t`; `None` when the
/// method is known to need arguments the generator cannot make safe.
fn shape(name: &str, t: Scalar, arity: usize) -> Shape {
    let unsigned = match t {
        Scalar::I8 => Scalar::U8,
        Scalar::I16 => Scalar::U16,
        Scalar::I32 => Scalar::U32,
        Scalar::I64 => Scalar::U64,
        other => other,
    };
    match name {
        "wrapping_div" | "wrapping_rem" => Shape::Divisor,
        "wrapping_shl" | "wrapping_shr" | "rotate_left" | "rotate_right" => Shape::U32Arg(127),
        "wrapping_pow" | "saturating_pow" => Shape::U32Arg(15),
        "checked_pow" => Shape::CheckedU32(15),
        "overflowing_pow" => Shape::OverflowingU32(15),
        "overflowing_div" | "overflowing_rem" => Shape::OverflowingDivisor,
        "rem_euclid" | "div_euclid" => Shape::PositiveDivisor,
        // `pow` overflows (a panic with overflow checks) unless the
        // exponent is 0 or 1.
        "pow" => Shape::U32Arg(1),
        "count_ones" | "count_zeros" | "leading_zeros" | "trailing_zeros" => {
            Shape::Unary(Some(Scalar::U32))
        }
        "unsigned_abs" => Shape::Unary(Some(unsigned)),
        "abs_diff" => Shape::BinaryTo(unsigned),
        "is_negative" | "is_positive" | "is_power_of_two" | "is_nan" | "is_finite"
        | "is_infinite" | "is_sign_negative" | "is_sign_positive" => {
            Shape::Unary(Some(Scalar::Bool))
        }
        "to_bits" if t == Scalar::F32 => Shape::Unary(Some(Scalar::U32)),
        "to_bits" => Shape::Unary(Some(Scalar::U64)),
        "clamp" => Shape::Clamp,
        _ => match arity {
            1 => Shape::Unary(None),
            2 => Shape::Same,
            _ => Shape::Ternary,
        },
    }
}

/// A literal of type `t` (parenthesised when negative).
fn literal(rng: &mut Rng, t: Scalar) -> String {
    match t {
        Scalar::Bool => rng.chance(50).to_string(),
        Scalar::F32 | Scalar::F64 => {
            let v = (rng.below(4001) as f64 - 2000.0) / 16.0;
            let s = format!("{v:?}{}", t.name());
            if v < 0.0 {
                format!("({s})")
            } else {
                s
            }
        }
        _ => {
            // Mostly small values, sometimes the edges of the type.
            let b = bits(t);
            let signed = t.is_signed();
            let v: i128 = match rng.below(6) {
                0 => {
                    if signed {
                        -(1i128 << (b - 1))
                    } else {
                        (1i128 << b) - 1
                    }
                }
                1 => {
                    if signed {
                        (1i128 << (b - 1)) - 1
                    } else {
                        1i128 << (b - 1)
                    }
                }
                _ => rng.below(200) as i128 - if signed { 100 } else { 0 },
            };
            if v < 0 {
                // `-128i8` is a valid literal only as `i8::MIN`'s spelling.
                if v == -(1i128 << (b - 1)) {
                    format!("{}::MIN", t.name())
                } else {
                    format!("({v}{})", t.name())
                }
            } else {
                format!("{v}{}", t.name())
            }
        }
    }
}

/// One callback's generation state: the variables in scope and the helpers
/// it may call.
struct Ctx<'r> {
    rng: &'r mut Rng,
    vars: Vec<(String, Scalar)>,
    helpers: Vec<Helper>,
    fresh: usize,
    /// Methods used, for coverage checks.
    methods: Vec<&'static str>,
    /// File-level items the code uses (its enums), and the prefix that
    /// makes their names unique in a file.
    items: Vec<String>,
    prefix: String,
    /// Constructs drawn, for coverage checks.
    constructs: Vec<&'static str>,
}

#[derive(Clone)]
struct Helper {
    name: String,
    params: Vec<Scalar>,
    ret: Scalar,
}

impl Ctx<'_> {
    fn fresh(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn leaf(&mut self, t: Scalar) -> String {
        let vars: Vec<String> = self
            .vars
            .iter()
            .filter(|(_, vt)| *vt == t)
            .map(|(n, _)| n.clone())
            .collect();
        if !vars.is_empty() && self.rng.chance(70) {
            return self.rng.pick(&vars).clone();
        }
        if self.rng.chance(60) {
            // A cast of a variable of another type keeps data flowing.
            let from: Vec<(String, Scalar)> = self
                .vars
                .iter()
                .filter(|(_, vt)| castable(*vt, t))
                .cloned()
                .collect();
            if !from.is_empty() {
                let (n, _) = self.rng.pick(&from).clone();
                return format!("({n} as {})", t.name());
            }
        }
        literal(self.rng, t)
    }

    /// An expression of type `t`.
    fn expr(&mut self, t: Scalar, depth: u32) -> String {
        if depth == 0 || self.rng.chance(15) {
            return self.leaf(t);
        }
        let d = depth - 1;
        match self.rng.below(12) {
            10 | 11 => self.enum_value(t, d),
            0 => {
                let c = self.expr(Scalar::Bool, d);
                let a = self.expr(t, d);
                let b = self.expr(t, d);
                format!("(if {c} {{ {a} }} else {{ {b} }})")
            }
            1 if t != Scalar::Bool => {
                let from: Vec<Scalar> = TYPES.iter().copied().filter(|f| castable(*f, t)).collect();
                let f = *self.rng.pick(&from);
                let e = self.expr(f, d);
                format!("({e} as {})", t.name())
            }
            2 if !self.helpers.is_empty() => {
                let fitting: Vec<Helper> = self
                    .helpers
                    .iter()
                    .filter(|h| h.ret == t)
                    .cloned()
                    .collect();
                if fitting.is_empty() {
                    return self.op(t, d);
                }
                let h = self.rng.pick(&fitting).clone();
                let args: Vec<String> = h.params.iter().map(|p| self.expr(*p, d)).collect();
                format!("{}({})", h.name, args.join(", "))
            }
            3..=5 => self.method(t, d),
            _ => self.op(t, d),
        }
    }

    /// An expression of type `t` that goes through an enum value: a
    /// `match` on an `Ordering` (of `cmp` of integers, `total_cmp` of
    /// floats) or an `Option<Ordering>` (`partial_cmp`), an `if let` on a
    /// `checked_*` result, or an enum of the file's own with payloads,
    /// built in one of its variants and matched.
    fn enum_value(&mut self, t: Scalar, d: u32) -> String {
        const ORD: &str = "core::cmp::Ordering";
        const FLOATS: [Scalar; 2] = [Scalar::F32, Scalar::F64];
        let ord = |variant: &str| format!("{ORD}::{variant}");
        let ints: Vec<Scalar> = TYPES.iter().copied().filter(|x| is_int(*x)).collect();
        match self.rng.below(5) {
            0 => {
                let arms = [ord("Less"), ord("Equal"), ord("Greater")];
                self.compared("match cmp", &ints, "cmp", &arms, t, d)
            }
            1 => {
                let arms = [ord("Greater"), "_".into()];
                self.compared("match total_cmp", &FLOATS, "total_cmp", &arms, t, d)
            }
            2 => {
                let arms = [
                    format!("Some({})", ord("Less")),
                    "Some(_)".into(),
                    "None".into(),
                ];
                self.compared("match partial_cmp", &FLOATS, "partial_cmp", &arms, t, d)
            }
            3 => {
                self.constructs.push("if let Some");
                let u = *self.rng.pick(&ints);
                let m = self
                    .rng
                    .pick(&["checked_add", "checked_sub", "checked_mul"]);
                let (x, y) = (self.expr(u, d), self.expr(u, d));
                let v = self.fresh("s");
                let scope = self.vars.len();
                self.vars.push((v.clone(), u));
                let a = self.expr(t, d);
                self.vars.truncate(scope);
                let b = self.expr(t, d);
                format!("(if let Some({v}) = ({x}).{m}({y}) {{ {a} }} else {{ {b} }})")
            }
            _ => {
                self.constructs.push("own enum");
                // enum E { A(p), B(q, r), C }: built by a condition, matched.
                let name = format!("E{}_{}", self.prefix, self.items.len());
                let p = *self.rng.pick(&TYPES);
                let (q, r) = (*self.rng.pick(&TYPES), *self.rng.pick(&TYPES));
                self.items.push(format!(
                    "#[derive(Clone, Copy)]\nenum {name} {{\n    A({}),\n    B({}, {}),\n    C,\n}}\n",
                    p.name(),
                    q.name(),
                    r.name()
                ));
                let (c1, c2) = (self.expr(Scalar::Bool, d), self.expr(Scalar::Bool, d));
                let (ep, eq, er) = (self.expr(p, d), self.expr(q, d), self.expr(r, d));
                let (vp, vq, vr) = (self.fresh("e"), self.fresh("e"), self.fresh("e"));
                let scope = self.vars.len();
                self.vars.push((vp.clone(), p));
                let a = self.expr(t, d);
                self.vars.truncate(scope);
                self.vars.push((vq.clone(), q));
                self.vars.push((vr.clone(), r));
                let b = self.expr(t, d);
                self.vars.truncate(scope);
                let c = self.expr(t, d);
                format!(
                    "(match (if {c1} {{ {name}::A({ep}) }} else if {c2} {{ {name}::B({eq}, {er}) }} else {{ {name}::C }}) \
                     {{ {name}::A({vp}) => {a}, {name}::B({vq}, {vr}) => {b}, {name}::C => {c} }})"
                )
            }
        }
    }

    /// `(match (x).method(&(y)) { ARM => e, … })` of type `t`, with `x`
    /// and `y` of one of `operands`, one expression per arm pattern.
    fn compared(
        &mut self,
        construct: &'static str,
        operands: &[Scalar],
        method: &str,
        arms: &[String],
        t: Scalar,
        d: u32,
    ) -> String {
        self.constructs.push(construct);
        let u = *self.rng.pick(operands);
        let (x, y) = (self.expr(u, d), self.expr(u, d));
        let arms: Vec<String> = arms
            .iter()
            .map(|pattern| format!("{pattern} => {}", self.expr(t, d)))
            .collect();
        format!("(match ({x}).{method}(&({y})) {{ {} }})", arms.join(", "))
    }

    /// An operator expression of type `t`.
    fn op(&mut self, t: Scalar, d: u32) -> String {
        if t == Scalar::Bool {
            return match self.rng.below(4) {
                0 => format!("(!{})", self.expr(Scalar::Bool, d)),
                1 => {
                    let o = self.rng.pick(&["&&", "||", "^", "&", "|"]);
                    format!(
                        "({} {o} {})",
                        self.expr(Scalar::Bool, d),
                        self.expr(Scalar::Bool, d)
                    )
                }
                _ => {
                    let u = *self.rng.pick(&TYPES[..10]);
                    let o = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                    format!("({} {o} {})", self.expr(u, d), self.expr(u, d))
                }
            };
        }
        if is_float(t) {
            let o = self.rng.pick(&["+", "-", "*", "/"]);
            if self.rng.chance(10) {
                return format!("(-{})", self.expr(t, d));
            }
            return format!("({} {o} {})", self.expr(t, d), self.expr(t, d));
        }
        match self.rng.below(5) {
            0 => format!("(!{})", self.expr(t, d)),
            1 => {
                let k = self.rng.below(bits(t) as usize);
                let o = self.rng.pick(&["<<", ">>"]);
                format!("({} {o} {k})", self.expr(t, d))
            }
            _ => {
                let o = self.rng.pick(&["&", "|", "^"]);
                format!("({} {o} {})", self.expr(t, d), self.expr(t, d))
            }
        }
    }

    /// A call of a method from the capability table whose result is `t`.
    fn method(&mut self, t: Scalar, d: u32) -> String {
        // Candidates: (entry, receiver type) pairs that produce `t`.
        let mut cands = Vec::new();
        for e in CORE_OPS
            .iter()
            .filter(|e| e.kind == CoreKind::Method && !UNDRAWN.contains(&e.name))
        {
            for r in TYPES {
                if !e.receivers.accepts(r) {
                    continue;
                }
                let ret = match shape(e.name, r, e.arity) {
                    Shape::Unary(Some(x)) | Shape::BinaryTo(x) => x,
                    _ => r,
                };
                if ret == t {
                    cands.push((e, r));
                }
            }
        }
        if cands.is_empty() {
            return self.op(t, d);
        }
        let (e, r) = *self.rng.pick(&cands);
        self.methods.push(e.name);
        let mut recv = self.expr(r, d);
        // `abs` of MIN overflows: keep the receiver off MIN.
        if e.name == "abs" && is_int(r) {
            recv = format!("({recv} | 1)");
        }
        match shape(e.name, r, e.arity) {
            Shape::CheckedU32(mask) => {
                let e_arg = format!("({} & {mask})", self.expr(Scalar::U32, d));
                let or = self.expr(r, d);
                return format!("({recv}).{}({e_arg}).unwrap_or({or})", e.name);
            }
            Shape::OverflowingU32(mask) => {
                let e_arg = format!("({} & {mask})", self.expr(Scalar::U32, d));
                return format!("({recv}).{}({e_arg}).0", e.name);
            }
            Shape::OverflowingDivisor => {
                let y = self.expr(r, d);
                return format!("({recv}).{}(({y} | 1)).0", e.name);
            }
            _ => {}
        }
        let args = match shape(e.name, r, e.arity) {
            Shape::CheckedU32(_) | Shape::OverflowingU32(_) | Shape::OverflowingDivisor => vec![],
            Shape::PositiveDivisor if is_int(r) && r.is_signed() => {
                vec![format!("(({} & 0x3f) | 1)", self.expr(r, d))]
            }
            Shape::PositiveDivisor => vec![format!("({} | 1)", self.expr(r, d))],
            Shape::Same | Shape::BinaryTo(_) => vec![self.expr(r, d)],
            Shape::Divisor => vec![format!("({} | 1)", self.expr(r, d))],
            Shape::U32Arg(mask) => vec![format!("({} & {mask})", self.expr(Scalar::U32, d))],
            Shape::Unary(_) => vec![],
            Shape::Clamp => {
                let mut a = literal(self.rng, r);
                let mut b = literal(self.rng, r);
                if value_of(&a) > value_of(&b) {
                    std::mem::swap(&mut a, &mut b);
                }
                vec![a, b]
            }
            Shape::Ternary => vec![self.expr(r, d), self.expr(r, d)],
        };
        format!("({recv}).{}({})", e.name, args.join(", "))
    }

    /// A range of small literals of the integer type `et`, iterated by
    /// `core`'s machinery: `lo..hi`, `lo..=hi`, reversed or stepped; or an
    /// array of such literals, by value or through `iter().copied()`.
    fn range(&mut self, et: Scalar) -> String {
        let lo = self.rng.below(4) as i64 - if et.is_signed() { 2 } else { 0 };
        let hi = lo + self.rng.below(6) as i64;
        let lit = |v: i64| {
            if v < 0 {
                format!("({v}{})", et.name())
            } else {
                format!("{v}{}", et.name())
            }
        };
        // An array of a few small literals, iterated by value or through
        // its slice iterator.
        let array = |rng: &mut Rng| {
            let n = 1 + rng.below(4);
            let items: Vec<String> = (0..n)
                .map(|_| lit(rng.below(6) as i64 - if et.is_signed() { 2 } else { 0 }))
                .collect();
            format!("[{}]", items.join(", "))
        };
        let (lo, hi) = (lit(lo), lit(hi));
        match self.rng.below(8) {
            0 => format!("({lo}..={hi})"),
            1 => format!("({lo}..{hi}).rev()"),
            2 => format!("({lo}..{hi}).step_by({})", 1 + self.rng.below(3)),
            3 => format!("({lo}..={hi}).rev()"),
            4 => format!("{}.iter().copied()", array(self.rng)),
            5 => format!("{}.into_iter()", array(self.rng)),
            6 => format!("{}.iter().copied().rev()", array(self.rng)),
            _ => format!("({lo}..{hi})"),
        }
    }

    /// An expression over `core`'s iterators of a range, of type `t`, with
    /// a closure whose parameters (`acc`, the element) join the variables
    /// in scope for its body only.
    fn iterator(&mut self, t: Scalar, d: u32) -> String {
        let ints: Vec<Scalar> = TYPES.iter().copied().filter(|x| is_int(*x)).collect();
        let et = *self.rng.pick(&ints);
        let range = self.range(et);
        let i = self.fresh("i");
        let scope = self.vars.len();
        let text = match (t, self.rng.below(3)) {
            (Scalar::Bool, k) => {
                self.vars.push((i.clone(), et));
                let p = self.expr(Scalar::Bool, d);
                let m = if k == 0 { "all" } else { "any" };
                format!("{range}.{m}(|{i}| {p})")
            }
            (Scalar::U32, 0) => {
                let or = self.expr(Scalar::U32, d);
                self.vars.push((i.clone(), et));
                let p = self.expr(Scalar::Bool, d);
                format!("{range}.position(|{i}| {p}).map_or({or}, |p| p as u32)")
            }
            (f, 1) if is_float(f) => {
                self.vars.push((i.clone(), et));
                let e = self.expr(f, d);
                format!("{range}.map(|{i}| {e}).sum::<{}>()", f.name())
            }
            (_, 2) if is_int(t) => {
                self.vars.push((i.clone(), et));
                let p = self.expr(Scalar::Bool, d);
                format!("({range}.filter(|&{i}| {p}).count() as {})", t.name())
            }
            _ => {
                let acc = self.fresh("acc");
                let init = self.expr(t, d);
                self.vars.push((acc.clone(), t));
                self.vars.push((i.clone(), et));
                let e = self.expr(t, d);
                format!("{range}.fold({init}, |{acc}, {i}| {e})")
            }
        };
        self.vars.truncate(scope);
        text
    }

    /// Statements that bind new locals, with branches and bounded loops.
    fn stmts(&mut self, out: &mut String, indent: &str, count: usize, depth: u32) {
        for _ in 0..count {
            let t = *self.rng.pick(&TYPES);
            let name = self.fresh("v");
            match self.rng.below(6) {
                4 => {
                    // A `for` loop over a range, updating a fresh accumulator.
                    let ints: Vec<Scalar> = TYPES.iter().copied().filter(|x| is_int(*x)).collect();
                    let et = *self.rng.pick(&ints);
                    let range = self.range(et);
                    let i = self.fresh("i");
                    let init = self.expr(t, depth);
                    out.push_str(&format!("{indent}let mut {name}: {} = {init};\n", t.name()));
                    out.push_str(&format!("{indent}for {i} in {range} {{\n"));
                    let scope = self.vars.len();
                    self.vars.push((name.clone(), t));
                    self.vars.push((i, et));
                    let step = self.expr(t, depth);
                    self.vars.truncate(scope);
                    out.push_str(&format!("{indent}    {name} = {step};\n{indent}}}\n"));
                    self.vars.push((name, t));
                }
                5 => {
                    let e = self.iterator(t, depth);
                    out.push_str(&format!("{indent}let {name}: {} = {e};\n", t.name()));
                    self.vars.push((name, t));
                }
                0 => {
                    // A bounded loop that updates a fresh accumulator.
                    let j = self.fresh("j");
                    let n = self.rng.below(5);
                    let init = self.expr(t, depth);
                    out.push_str(&format!("{indent}let mut {name}: {} = {init};\n", t.name()));
                    out.push_str(&format!("{indent}let mut {j} = 0u32;\n"));
                    out.push_str(&format!("{indent}while {j} < {n} {{\n"));
                    self.vars.push((name.clone(), t));
                    self.vars.push((j.clone(), Scalar::U32));
                    let step = self.expr(t, depth);
                    out.push_str(&format!("{indent}    {name} = {step};\n"));
                    out.push_str(&format!("{indent}    {j} += 1;\n{indent}}}\n"));
                }
                1 => {
                    let c = self.expr(Scalar::Bool, depth);
                    let a = self.expr(t, depth);
                    let b = self.expr(t, depth);
                    out.push_str(&format!(
                        "{indent}let {name}: {} = if {c} {{\n{indent}    {a}\n{indent}}} else {{\n{indent}    {b}\n{indent}}};\n",
                        t.name()
                    ));
                    self.vars.push((name, t));
                }
                _ => {
                    let e = self.expr(t, depth);
                    out.push_str(&format!("{indent}let {name}: {} = {e};\n", t.name()));
                    self.vars.push((name, t));
                }
            }
        }
    }
}

fn castable(from: Scalar, to: Scalar) -> bool {
    // `as` goes between numeric types and from `bool` to integers.
    to != Scalar::Bool && (from != Scalar::Bool || is_int(to))
}

fn value_of(lit: &str) -> f64 {
    let s = lit.trim_matches(|c| c == '(' || c == ')');
    if let Some(t) = s.strip_suffix("::MIN") {
        return match t {
            "i8" => i8::MIN as f64,
            "i16" => i16::MIN as f64,
            "i32" => i32::MIN as f64,
            _ => i64::MIN as f64,
        };
    }
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-' || *c == '.')
        .collect();
    digits.trim_end_matches('.').parse().unwrap_or(0.0)
}

/// One generated callback: its helpers, its entry function, and the core
/// methods it calls.
pub struct Callback {
    pub source: String,
    pub methods: Vec<&'static str>,
    /// The enum and aggregate constructs it uses (`match cmp`, `tuple
    /// capture`, …), for coverage checks.
    pub constructs: Vec<&'static str>,
}

/// The seed of callback `index` of file seed `seed`.
fn callback_seed(seed: u64, index: usize) -> u64 {
    let mut r = Rng::new(seed ^ (index as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.next()
}

/// Callback `index` of `seed`, alone: helpers and `pub fn entry{index}`.
pub fn callback(seed: u64, index: usize) -> Callback {
    let mut rng = Rng::new(callback_seed(seed, index));
    let mut src = String::new();
    // Captures: caller arguments of several types, used by the closure.
    let ncap = rng.below(4);
    let mut captures = Vec::new();
    for c in 0..ncap {
        let t = *rng.pick(&TYPES);
        captures.push((format!("c{index}_{c}"), t));
    }
    let mut helpers = Vec::new();
    let mut methods = Vec::new();
    let mut constructs = Vec::new();
    for h in 0..rng.below(3) {
        let params: Vec<Scalar> = (0..1 + rng.below(3)).map(|_| *rng.pick(&TYPES)).collect();
        let ret = *rng.pick(&TYPES);
        let name = format!("h{index}_{h}");
        let vars: Vec<(String, Scalar)> = params
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("p{i}"), *t))
            .collect();
        let mut ctx = Ctx {
            rng: &mut rng,
            vars: vars.clone(),
            helpers: helpers.clone(),
            fresh: 0,
            methods: Vec::new(),
            items: Vec::new(),
            prefix: format!("{index}_{h}"),
            constructs: Vec::new(),
        };
        let mut body = String::new();
        let n = ctx.rng.below(3);
        ctx.stmts(&mut body, "    ", n, 2);
        let result = ctx.expr(ret, 3);
        methods.extend(ctx.methods);
        constructs.extend(ctx.constructs);
        for item in ctx.items {
            src.push_str(&item);
        }
        let sig: Vec<String> = vars
            .iter()
            .map(|(n, t)| format!("{n}: {}", t.name()))
            .collect();
        src.push_str(&format!(
            "fn {name}({}) -> {} {{\n{body}    {result}\n}}\n",
            sig.join(", "),
            ret.name()
        ));
        helpers.push(Helper { name, params, ret });
    }
    let mut vars = vec![
        ("a".to_string(), Scalar::I32),
        ("b".to_string(), Scalar::I32),
    ];
    vars.extend(captures.iter().cloned());
    // Aggregates: arguments of the entry function (a tuple, or a struct
    // of the file with public fields, as the bundles' host harness makes
    // them), whose fields the closure reads: edition 2021's precise
    // captures take each field it names (`g.0`, `g.f1`), and a closure
    // inside it borrowing two fields of one value is the case rustc's MIR
    // text prints short (`prepare::complete_closure_aggregates`). Whole
    // aggregates captured, and arrays, are covered by case files and
    // examples/gpu-rust: the harness passes scalars and fields only.
    let mut aggregates = String::new();
    for k in 0..rng.below(3) {
        let name = format!("g{index}_{k}");
        let fields: Vec<Scalar> = (0..1 + rng.below(3)).map(|_| *rng.pick(&TYPES)).collect();
        if rng.chance(50) {
            constructs.push("tuple capture");
            let tys: Vec<&str> = fields.iter().map(|t| t.name()).collect();
            let tuple = if tys.len() == 1 {
                format!("({},)", tys[0])
            } else {
                format!("({})", tys.join(", "))
            };
            aggregates.push_str(&format!(", {name}: {tuple}"));
            for (i, t) in fields.iter().enumerate() {
                vars.push((format!("{name}.{i}"), *t));
            }
        } else {
            constructs.push("struct capture");
            let sname = format!("S{index}_{k}");
            let decl: Vec<String> = fields
                .iter()
                .enumerate()
                .map(|(i, t)| format!("    pub f{i}: {},\n", t.name()))
                .collect();
            src.push_str(&format!(
                "#[derive(Clone, Copy)]\npub struct {sname} {{\n{}}}\n",
                decl.concat()
            ));
            aggregates.push_str(&format!(", {name}: {sname}"));
            for (i, t) in fields.iter().enumerate() {
                vars.push((format!("{name}.f{i}"), *t));
            }
        }
    }
    let mut ctx = Ctx {
        rng: &mut rng,
        vars,
        helpers,
        fresh: 0,
        methods: Vec::new(),
        items: Vec::new(),
        prefix: format!("{index}"),
        constructs: Vec::new(),
    };
    let mut body = String::new();
    let n = 1 + ctx.rng.below(4);
    ctx.stmts(&mut body, "        ", n, 3);
    let result = ctx.expr(Scalar::I32, 4);
    let init = literal(ctx.rng, Scalar::I32);
    methods.extend(ctx.methods);
    constructs.extend(ctx.constructs);
    for item in ctx.items {
        src.push_str(&item);
    }
    let params: String = captures
        .iter()
        .map(|(n, t)| format!(", {n}: {}", t.name()))
        .collect();
    src.push_str(&format!(
        "pub fn entry{index}(data: &[i32]{params}{aggregates}) -> i32 {{\n    native::reduce(data, {init}, move |a, b| {{\n{body}        {result}\n    }})\n}}\n"
    ));
    Callback {
        source: src,
        methods,
        constructs,
    }
}

/// The header every generated file starts with.
pub fn header(seed: u64) -> String {
    format!(
        "// Generated by driver/tests/common/gen.rs, seed {seed}: random callbacks\n\
         // for differential testing (see docs/testing.md).\n\
         #![allow(unused)]\n"
    )
}

/// A file of `n` callbacks for `seed`.
pub fn file(seed: u64, n: usize) -> (String, Vec<Callback>) {
    let callbacks: Vec<Callback> = (0..n).map(|i| callback(seed, i)).collect();
    let mut text = header(seed);
    for c in &callbacks {
        text.push_str(&c.source);
    }
    (text, callbacks)
}
