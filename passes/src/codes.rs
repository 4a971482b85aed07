//! Stable diagnostic codes, each with a long explanation for `driver explain`.
//! A code never changes meaning; retired codes are not reused.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Code {
    /// A capture held by reference (`&T`, `&mut T`, `&&T`, `&[T]`).
    BorrowedCapture,
    /// A raw-pointer capture.
    PointerCapture,
    /// A capture that is not made of numeric scalars (`Vec`, string, box, enum, generic struct).
    NonScalarCapture,
    /// Mutable callback state: `FnMut`, or a write through the environment.
    MutableState,
    /// Not `(i32, i32) -> i32`.
    Signature,
    /// A call that reaches a CUDA API or another registration.
    ReachesCuda,
    /// A call of a function with no body here.
    ForeignCall,
    /// Direct or mutual recursion.
    Recursion,
    /// MIR the lowering cannot handle.
    UnsupportedMir,
    /// rustc's layout of the closure object was not measured.
    UnknownLayout,
    /// A warning: the operation breaks the provider's contract
    /// (associativity, commutativity), shown by running it on the host.
    OperatorContract,
}

impl Code {
    pub const ALL: [Code; 11] = [
        Code::BorrowedCapture,
        Code::PointerCapture,
        Code::NonScalarCapture,
        Code::MutableState,
        Code::Signature,
        Code::ReachesCuda,
        Code::ForeignCall,
        Code::Recursion,
        Code::UnsupportedMir,
        Code::UnknownLayout,
        Code::OperatorContract,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::BorrowedCapture => "E0101",
            Code::PointerCapture => "E0102",
            Code::NonScalarCapture => "E0103",
            Code::MutableState => "E0104",
            Code::Signature => "E0105",
            Code::ReachesCuda => "E0106",
            Code::ForeignCall => "E0107",
            Code::Recursion => "E0108",
            Code::UnsupportedMir => "E0109",
            Code::UnknownLayout => "E0110",
            Code::OperatorContract => "W0201",
        }
    }

    /// Whether this is a warning (the build goes on, unless warnings are
    /// denied) rather than a rejection.
    pub fn is_warning(self) -> bool {
        self.as_str().starts_with('W')
    }

    pub fn parse(s: &str) -> Option<Code> {
        let s = s.trim();
        // `E0101`, `e0101`, `0101`, `101`, `W0201`, `0201` (the digits of
        // every code are unique, whatever its letter).
        let (letter, digits) = match s.chars().next() {
            Some(c) if c.is_ascii_alphabetic() => (Some(c.to_ascii_uppercase()), &s[1..]),
            _ => (None, s),
        };
        Code::ALL.into_iter().find(|c| {
            let code = c.as_str();
            letter.is_none_or(|l| code.starts_with(l))
                && (code[1..] == *digits || code[1..].trim_start_matches('0') == digits)
        })
    }

    /// The long explanation, with an example, like `rustc --explain`.
    /// E0109's ends with the table of core operations the GPU side runs,
    /// generated from the capability table that admission and lowering read.
    pub fn explain(self) -> String {
        let text = self.explain_text();
        if self == Code::UnsupportedMir {
            format!("{text}\n{}", core_ops_table())
        } else {
            text.to_string()
        }
    }

    fn explain_text(self) -> &'static str {
        match self {
            Code::BorrowedCapture => EXPLAIN_E0101,
            Code::PointerCapture => EXPLAIN_E0102,
            Code::NonScalarCapture => EXPLAIN_E0103,
            Code::MutableState => EXPLAIN_E0104,
            Code::Signature => EXPLAIN_E0105,
            Code::ReachesCuda => EXPLAIN_E0106,
            Code::ForeignCall => EXPLAIN_E0107,
            Code::Recursion => EXPLAIN_E0108,
            Code::UnsupportedMir => EXPLAIN_E0109,
            Code::UnknownLayout => EXPLAIN_E0110,
            Code::OperatorContract => EXPLAIN_W0201,
        }
    }
}

/// The core methods and intrinsics the GPU side runs, with their receiver
/// types, from `frontend::registry::CORE_OPS`.
fn core_ops_table() -> String {
    use frontend::registry::{CoreKind, CORE_OPS};
    let mut out =
        String::from("Core methods a callback may call, and on which receiver types:\n\n");
    for e in CORE_OPS.iter().filter(|e| e.kind == CoreKind::Method) {
        out.push_str(&format!("    {:<16} {}\n", e.name, e.receivers.describe()));
    }
    out
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

const EXPLAIN_E0101: &str = r#"A callback captures a variable by reference.

The callback runs on the GPU, inside a native provider's kernel. Its
environment is copied to the device by value, byte for byte; a reference in
it would be a host address, meaningless on the GPU.

Erroneous code example:

    pub fn entry(data: &[i32], k: i32) -> i32 {
        native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(k))
        //                      ------ captures `k` by reference
    }

Capture by value instead: add `move` to the closure, and make sure the
captured variable is a numeric scalar (not itself a reference):

    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))
"#;

const EXPLAIN_E0102: &str = r#"A callback captures a raw pointer.

A raw pointer captured on the host holds a host address; dereferencing it on
the GPU reads whatever lives at that address in device memory, if anything.

Erroneous code example:

    pub fn entry(data: &[i32], p: *const i32) -> i32 {
        native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(unsafe { *p }))
    }

Read the value on the host and capture the value:

    let k = unsafe { *p };
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))
"#;

const EXPLAIN_E0103: &str = r#"A callback captures a value that is not made of numeric scalars.

Callback environments hold integers, floats, `bool` and `char`, and tuples,
arrays, non-generic structs of the crate and closures made of them, by
value: the closure object's own bytes, laid out as rustc lays them out
(measured), each scalar checked on the C++ side field by field. A `Vec`,
`String` or `Box` owns host memory, a reference or pointer holds a host
address, and an enum, a generic struct or a struct of another crate has no
measured layout.

Erroneous code example:

    let table = vec![1, 2, 3];
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(table[0]))

Capture the values the callback needs, as scalars or an array:

    let t = [table[0], table[1], table[2]];
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(t[0]))
"#;

const EXPLAIN_E0104: &str = r#"A callback has mutable state.

The provider calls the callback from many GPU threads at once, in an order
it chooses. A callback that writes its captured state (an `FnMut` closure,
or a write through its environment) would race with itself.

Erroneous code example:

    let mut calls = 0;
    native::reduce_mut(data, 0, move |a, b| { calls += 1; a.wrapping_add(b) })

Keep the callback a pure function of its arguments and immutable captures.
Count on the host if you need to: the provider calls the callback
`data.len()` times.
"#;

const EXPLAIN_E0105: &str = r#"A callback does not have the type its provider needs.

Each provider calls its callback with one shape, over element types it
takes:

    reduce, inclusive_scan, exclusive_scan,
    segmented_reduce                          (T, T) -> T
    transform                                 (T) -> U
    transform2                                (T, U) -> V
    select                                    (T) -> bool
    sort_by                                   (&T, &T) -> Ordering
    gpu.par_iter(&x) chains                   map (T) -> U, filter (&T) -> bool,
                                              then a terminal (sum, min_by, ...)

where T, U and V are each one of i8, i16, i32, i64, u8, u16, u32, u64,
f32 and f64 (`bool` only as a predicate's result). A comparator is what
`slice::sort_by` takes: `|a, b| a.cmp(b)`, `|a, b| b.total_cmp(a)`. The
functions of `native` are generic, so rustc accepts other element types
(i128, usize, tuples, references, structs); the GPU providers do not. A
function pointer, or a callback with no body in the file, is refused too:
the GPU code is compiled from the callback's body. So is a `par_iter`
chain whose closures belong to a generic function (written in its type
parameters): write the chain where its element types are concrete.

Erroneous code example:

    pub fn entry(data: &[i128]) -> i128 {
        native::reduce(data, 0, |a, b| a.wrapping_add(b))
    }

Convert the data to an element type the providers take on the host first,
or split tuples and structs into one slice per field.
"#;

const EXPLAIN_E0106: &str = r#"A callback reaches a CUDA API or another provider.

The callback runs inside a provider's kernel, on the device. A CUDA driver
or runtime call (`cuCtxSynchronize`, `cudaDeviceSynchronize`, ...) is a host
API, and registering another provider from inside a callback would launch
work from device code. The check follows calls through every chain of local
helpers, and the note shows the chain.

Erroneous code example:

    extern "C" { fn cuCtxSynchronize() -> u32; }
    fn level2(x: i32) -> i32 { unsafe { cuCtxSynchronize() }; x }
    fn level1(x: i32) -> i32 { level2(x) }
    native::reduce(data, 0, |a, b| level1(a).wrapping_add(b))

Do host work before or after the provider runs, never from its callback.
"#;

const EXPLAIN_E0107: &str = r#"A callback calls a function whose body is not available.

Only functions whose MIR is in the compiled file can be compiled for the
GPU, plus an allowlist of pure `core` scalar methods (`wrapping_add`, `min`,
`max`, `abs`, `rotate_left`, ...), plus `extern "C"` functions that a device
library given to the link defines. A method of another crate (`Vec::len`,
`Option::unwrap_or`) has no body here.

An `extern "C"` function is admitted when all of these hold:

- one of the inputs given with `driver build --link FILE` (or a Cargo
  package's `[package.metadata.rmir] link = [...]`) defines it as device
  code: a `.cu` file, PTX, LTOIR, a cubin, a fatbin, a host object or a
  static library built by nvcc;
- exactly one input defines it;
- its signature is scalar-only: every parameter and the result are `i32`,
  `u32`, `i64`, `u64`, `isize`, `usize`, `f32` or `f64` (or it returns
  nothing), which Rust and CUDA C++ pass the same way;
- where the input says (PTX, or a `.cu` file), the definition's parameter
  widths match the Rust declaration.

CUDA host APIs (`cudaMalloc`, `cuLaunchKernel`, ...) are E0106 whatever
defines them.

Erroneous code example:

    extern "C" { fn mix(x: u32, k: u32) -> u32; }
    native::reduce(data, 0, |a, b| unsafe { mix(a as u32, b as u32) } as i32)

built without `--link mix.cu`. Give the library that defines `mix`, or use
a `core` method or a helper written in Rust.
"#;

const EXPLAIN_E0108: &str = r#"A callback reaches a recursive function.

GPU threads have a small stack and the provider inlines the callback into
its loop; recursion (direct, or mutual through several helpers) is not
supported.

Erroneous code example:

    fn gcd(a: i32, b: i32) -> i32 { if b == 0 { a } else { gcd(b, a % b) } }
    native::reduce(data, 0, |a, b| gcd(a, b))

Write the function as a loop.
"#;

const EXPLAIN_E0109: &str = r#"A callback contains code the GPU lowering cannot handle.

The callbacks' MIR is rustc's optimised MIR (for every profile), in which
`core`'s small bodies are inlined. The lowering supports scalar arithmetic,
comparisons, casts between scalars, branches and loops (`for` over ranges,
`while`), iterators over ranges with their adaptors and folds (`map`,
`filter`, `rev`, `step_by`, `zip`, `enumerate`, `fold`, `sum`, `any`,
`position`, …), `contains` of a range (`(lo..hi).contains(&x)`,
`(b'a'..=b'z').contains(&c)`, of any scalar), `Option`, `Result`, `Ordering` and the crate's own structs and enums,
arrays and `const` lookup tables indexed by position, iteration
over an array the callback owns (a `const` table, a captured or local
array: `.iter()` with `fold`, `sum`, `product`, `any`, `all`, `position`,
`find`, `max`, `min`, `zip`, `enumerate`, `map`, `filter`, `count`, `rev`,
`take`, and `for` over an array or a reference to one) and a slice
borrowed from such an array, also by a helper taking `&[T]` (compiled
once per length it is called with), calls of local helpers (generic ones
too: each instance the callback reaches is compiled), closures built
inside the callback, the `core` methods and std float methods listed
below (std's transcendental functions through libdevice), and reads of
captured values. A slice whose length is not known where it is used (one
of several arrays chosen at run time, a `const` of slice type) and an
array iterator the lowering does not have (`chunks`, `windows`) are one
diagnostic each. So is a closure inside the callback that captures
several fields of one struct by value (`move |acc| acc + w.lo + w.hi`)
where rustc's MIR text prints only the first: reading the value whole
inside that closure (`let v = w;`, then `v.lo`, `v.hi`) compiles. Other code (heap values; another crate's enums) is
reported once per function, with what it needs and the lines of the MIR
rustc printed for it.

Erroneous code example:

    fn total(xs: &[u32]) -> u32 {
        xs.iter().fold(0, |a, &b| a.wrapping_add(b))
    }
    native::transform(data, move |x: u32| {
        let s: &[u32] = if x > 7 { &k } else { &PRIMES };
        x ^ total(s)
    })

Borrow one array where the function is called, which is compiled:

    native::transform(data, move |x: u32| {
        if x > 7 { x ^ total(&k) } else { x ^ total(&PRIMES) }
    })
"#;

const EXPLAIN_E0110: &str = r#"rustc's layout of a callback's closure object is unknown.

On the GPU the callback reads its captured values from the closure object
the program passed, byte for byte, so the compiler must know where rustc put
each captured field. rustc reorders a closure's fields, and stable Rust has no
API that gives their offsets: the frontend measures them with a probe built
by the same rustc (docs/closure-layout.md) when it imports a `.rs` file or
rustc's MIR text. A prepared-MIR document written without that measurement
(by hand, or by another tool) has no layout, and a callback whose closure
captures values cannot be built from it.

Erroneous code example (a `.pmir.json` whose closure has captures and no
`layout`):

    "closures": [{ "body": "keyed::{closure#0}", "captures": [ ... ] }]

Import the `.rs` file (or its `--emit=mir` output) again with this rustc, so
that the document records `layout` for the closure.
"#;

const EXPLAIN_W0201: &str = r#"A callback's operation breaks its provider's contract (a warning).

`reduce` and `segmented_reduce` combine elements in a tree whose shape the
GPU chooses (per thread, per block, then across blocks), so their
operation must be associative, `op(op(a, b), c) == op(a, op(b, c))`, and
commutative, `op(a, b) == op(b, a)`. The scans combine each prefix in a
tree of tiles, operands in index order: associative is enough. `sort_by`'s
merge sort asks its comparator only "is `a` before `b`", `compare(&a, &b)
== Ordering::Less`, which must be a strict weak order: irreflexive
(`compare(&a, &a)` is not `Less`), asymmetric, transitive, and transitive
in its ties; a total order (`Ord::cmp` on a key) is one. No GPU library
checks any of this: a violation gives a wrong answer, different from the
sequential host reference, and it may change with the input size.

At build time the callback itself runs on the host: the code the GPU gets,
compiled for this CPU (device library calls run the library's host build),
with several sets of captured values (all ones, all zeros, then
pseudo-random ones) over edge values of its element type (0, 1, -1, MIN,
MAX, ...) and pseudo-random ones; the first triple (or pair) that breaks a
law is the counterexample, with the captures that show it. Integers must
agree exactly. Floats are judged within a tolerance (16 ulps of the
largest magnitude among operands and results), because rounding differs
by grouping even for `+`: a float sum is not reported, a float `a - b` is.
An input on which the callback panics (an overflow check, `clamp` with
bounds the wrong way round) is skipped.

The build goes on; `driver build --deny-warnings`, `driver cargo build
--deny-warnings` or `RUSTFLAGS="-D warnings"` makes it an error (exit 1,
nothing written).

Erroneous code example:

    native::reduce(data, 0, |a, b| a.wrapping_sub(b))
    // warning[W0201]: ... op(op(a, b), c) = ... but op(a, op(b, c)) = ...
    native::sort_by(data, |a, b| if a <= b { Ordering::Less } else { Ordering::Greater })
    // warning[W0201]: ... not a strict weak order: it is not irreflexive

Use an associative and commutative operation (a wrapping sum or product,
`min`, `max`, `&`, `|`, `^`, a selection by a total order), an associative
one for the scans, and `cmp` on a key for a sort.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_parse_back() {
        for c in Code::ALL {
            assert_eq!(Code::parse(c.as_str()), Some(c));
            assert_eq!(Code::parse(&c.as_str()[1..]), Some(c));
            assert!(c.explain().contains("Erroneous code example"));
        }
        let mut s: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        s.dedup();
        assert_eq!(s.len(), Code::ALL.len());
        assert_eq!(Code::parse("E9999"), None);
    }
}
