//! The laws a provider's operation must keep, checked by calling it over
//! edge and pseudo-random values of its element type: associativity (and
//! commutativity for the reduces) of a fold, the strict weak order of a
//! comparator. The callee is any function of parameter slots (the host JIT
//! of the lowered callback, `contract`), so the checks know nothing of how
//! it runs; a call that panics gives no evidence either way and is skipped.
//!
//! Values travel as [`Slot`]s: the scalar's little-endian bytes, zero
//! above its size.

use manifest::Scalar;

pub use backend_nvptx::codegen::host::SLOT;

/// One value: a scalar's bytes, little-endian, zero-padded.
pub type Slot = [u8; SLOT];

/// A law broken, with the values that show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `associative`, `commutative`, `irreflexive`, `asymmetric`,
    /// `transitive`, `transitive in its ties`.
    pub law: String,
    pub counterexample: String,
}

/// The pseudo-random sequence of the checks (xorshift64), the same on every
/// run: a warning does not come and go between builds.
pub struct Sequence(u64);

impl Default for Sequence {
    fn default() -> Sequence {
        Sequence::new()
    }
}

impl Sequence {
    /// The sequence of the checks' values.
    pub fn new() -> Sequence {
        Sequence::from_seed(0x9E37_79B9_7F4A_7C15)
    }

    /// Another sequence (a nonzero seed).
    pub fn from_seed(seed: u64) -> Sequence {
        Sequence(seed)
    }

    pub fn draw(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn mask(s: Scalar) -> u128 {
    match s.size() {
        16 => u128::MAX,
        n => (1u128 << (8 * n)) - 1,
    }
}

fn int_slot(bits: u128, s: Scalar) -> Slot {
    let mut slot = [0u8; SLOT];
    let n = s.size() as usize;
    slot[..n].copy_from_slice(&(bits & mask(s)).to_le_bytes()[..n]);
    slot
}

fn float_slot(x: f64, s: Scalar) -> Slot {
    let mut slot = [0u8; SLOT];
    match s {
        Scalar::F32 => slot[..4].copy_from_slice(&(x as f32).to_le_bytes()),
        _ => slot[..8].copy_from_slice(&x.to_le_bytes()),
    }
    slot
}

fn bits(v: &Slot) -> u128 {
    u128::from_le_bytes(*v)
}

fn as_f64(v: &Slot, s: Scalar) -> f64 {
    match s {
        Scalar::F32 => f32::from_le_bytes(v[..4].try_into().expect("4 bytes")) as f64,
        _ => f64::from_le_bytes(v[..8].try_into().expect("8 bytes")),
    }
}

/// The values the checks draw from: edge values first (24, or all of a
/// type with fewer), then pseudo-random ones. `None` for a type the host
/// has no arithmetic for (`f16`, `f128`).
pub fn values(s: Scalar) -> Option<Vec<Slot>> {
    let mut seq = Sequence::new();
    let mut v: Vec<Slot> = Vec::new();
    match s {
        _ if s.is_int() => {
            let width = 8 * s.size() as u32;
            let (min, max) = if s.is_signed() {
                (1u128 << (width - 1), (1u128 << (width - 1)) - 1)
            } else {
                (0, mask(s))
            };
            let neg = |x: i128| x as u128;
            let half_min = if s.is_signed() {
                neg(-(1i128 << (width - 2)))
            } else {
                0
            };
            let edges = [
                0,
                1,
                2,
                3,
                7,
                max,
                max.wrapping_sub(1),
                min,
                min.wrapping_add(1),
                max >> 1,
                half_min,
                neg(-1),
                neg(-2),
                neg(-7),
                100,
                neg(-100),
                0x55,
                0x7f,
            ];
            v.extend(edges.iter().map(|&b| int_slot(b, s)));
            v.dedup();
            while v.len() < 24 {
                v.push(int_slot(seq.draw() as u128, s));
            }
            for _ in 0..40 {
                v.push(int_slot(seq.draw() as u128, s));
                v.push(int_slot(((seq.draw() % 201) as u128).wrapping_sub(100), s));
            }
        }
        Scalar::F32 | Scalar::F64 => {
            let edges = [
                0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 1e3, -1e3, 0.1, 7.0, -0.75,
            ];
            v.extend(edges.iter().map(|&x| float_slot(x, s)));
            let mut draw = || (seq.draw() % 2_000_001) as f64 / 1000.0 - 1000.0;
            while v.len() < 24 {
                v.push(float_slot(draw(), s));
            }
            for _ in 0..80 {
                v.push(float_slot(draw(), s));
            }
        }
        Scalar::Bool => v.extend([int_slot(0, s), int_slot(1, s)]),
        Scalar::Char => {
            let edges = [
                '\0',
                'a',
                'z',
                'A',
                '0',
                ' ',
                '\u{7f}',
                'é',
                '\u{ffff}',
                '\u{10ffff}',
            ];
            v.extend(edges.iter().map(|&c| int_slot(c as u128, s)));
            while v.len() < 64 {
                let c = (seq.draw() % 0x11_0000) as u32;
                if let Some(c) = char::from_u32(c) {
                    v.push(int_slot(c as u128, s));
                }
            }
        }
        _ => return None,
    }
    Some(v)
}

/// A value as `{:?}` prints it.
pub fn show(v: &Slot, s: Scalar) -> String {
    match s {
        Scalar::F32 => format!("{:?}", as_f64(v, s) as f32),
        Scalar::F64 => format!("{:?}", as_f64(v, s)),
        Scalar::Bool => format!("{:?}", v[0] != 0),
        Scalar::Char => match char::from_u32(bits(v) as u32) {
            Some(c) => format!("{c:?}"),
            None => format!("{:#x} (not a char)", bits(v)),
        },
        _ if s.is_signed() => {
            let width = 8 * s.size() as u32;
            let shift = 128 - width;
            format!("{}", ((bits(v) << shift) as i128) >> shift)
        }
        _ => format!("{}", bits(v) & mask(s)),
    }
}

/// Equal bits for integers; for floats, equal within 16 ulps of the
/// largest magnitude among the operands and results (rounding differs by
/// grouping even for an associative operation such as `+`), NaN equal to
/// NaN.
fn same(l: &Slot, r: &Slot, operands: &[&Slot], s: Scalar) -> bool {
    if !s.is_float() {
        return bits(l) & mask(s) == bits(r) & mask(s);
    }
    let eps = match s {
        Scalar::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    };
    let (x, y) = (as_f64(l, s), as_f64(r, s));
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x == y {
        return true;
    }
    let scale = operands
        .iter()
        .map(|o| as_f64(o, s).abs())
        .fold(x.abs().max(y.abs()), f64::max);
    (x - y).abs() <= 16.0 * eps * scale
}

/// The values a law is checked over: how they are drawn, compared and
/// printed. A scalar's are [`Slot`]s; a tuple's or struct's are its bytes
/// in rustc's layout ([`Composite`]).
pub trait Domain {
    type Value: Clone;
    /// Edge values first (24, or all there are), then pseudo-random ones;
    /// `None` when the host has no arithmetic for the type.
    fn values(&self) -> Option<Vec<Self::Value>>;
    /// Whether two results are the same value (floats within a tolerance
    /// scaled by the `operands`, as [`same`]).
    fn same(&self, l: &Self::Value, r: &Self::Value, operands: &[&Self::Value]) -> bool;
    /// A value as `{:?}` prints it.
    fn show(&self, v: &Self::Value) -> String;
    /// What data of these values may be sorted by: a scalar's value, each
    /// field of a tuple or struct (`None` for a value with no place in the
    /// order, a NaN).
    fn keys(&self, v: &Self::Value) -> Vec<Option<Key>>;
    /// The names of [`Domain::keys`], for messages (empty for a scalar).
    fn key_names(&self) -> Vec<String>;
}

/// A value's place in an order of the data: an integer's value, or a
/// float's (never NaN). The keys of one field are all of one kind.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Key {
    Int(i128),
    Float(f64),
}

/// A scalar's key: its value, `None` for a NaN.
fn key(v: &Slot, s: Scalar) -> Option<Key> {
    if s.is_float() {
        let x = as_f64(v, s);
        return (!x.is_nan()).then_some(Key::Float(x));
    }
    let width = 8 * s.size() as u32;
    let b = bits(v) & mask(s);
    let value = if s.is_signed() && width < 128 && b >> (width - 1) == 1 {
        b as i128 - (1i128 << width)
    } else {
        b as i128
    };
    Some(Key::Int(value))
}

impl Domain for Scalar {
    type Value = Slot;

    fn values(&self) -> Option<Vec<Slot>> {
        values(*self)
    }

    fn same(&self, l: &Slot, r: &Slot, operands: &[&Slot]) -> bool {
        same(l, r, operands, *self)
    }

    fn show(&self, v: &Slot) -> String {
        show(v, *self)
    }

    fn keys(&self, v: &Slot) -> Vec<Option<Key>> {
        vec![key(v, *self)]
    }

    fn key_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A tuple or struct: its bytes in rustc's layout, each scalar field at its
/// offset. Its values combine its fields' values (edge values with edge
/// values first); its padding holds a pattern and is never compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composite {
    pub size: usize,
    /// Each scalar: its path (`1.0`), offset and type, in field order.
    pub fields: Vec<(String, usize, Scalar)>,
}

/// What a composite's padding holds in the checks' values.
pub const PADDING: u8 = 0xa5;

impl Composite {
    fn field(&self, v: &[u8], i: usize) -> Slot {
        let (_, at, s) = &self.fields[i];
        let mut slot = [0u8; SLOT];
        let n = s.size() as usize;
        slot[..n].copy_from_slice(&v[*at..*at + n]);
        slot
    }
}

impl Domain for Composite {
    type Value = Vec<u8>;

    fn values(&self) -> Option<Vec<Vec<u8>>> {
        let each: Vec<Vec<Slot>> = self
            .fields
            .iter()
            .map(|(_, _, s)| values(*s))
            .collect::<Option<_>>()?;
        let mut seq = Sequence::from_seed(0xD1B5_4A32_D192_ED03);
        let value = |pick: &dyn Fn(usize, usize) -> usize| {
            let mut v = vec![PADDING; self.size];
            for (i, ((_, at, s), vals)) in self.fields.iter().zip(&each).enumerate() {
                let n = s.size() as usize;
                v[*at..*at + n].copy_from_slice(&vals[pick(i, vals.len())][..n]);
            }
            v
        };
        // Edge values of each field against shifted edge values of the
        // others, then pseudo-random picks from all of each field's values.
        let mut out: Vec<Vec<u8>> = (0..24)
            .map(|k| value(&|i, len| (k + 5 * i) % 24.min(len)))
            .collect();
        for _ in 0..80 {
            let draws: Vec<u64> = self.fields.iter().map(|_| seq.draw()).collect();
            out.push(value(&|i, len| (draws[i] % len as u64) as usize));
        }
        Some(out)
    }

    fn same(&self, l: &Vec<u8>, r: &Vec<u8>, operands: &[&Vec<u8>]) -> bool {
        (0..self.fields.len()).all(|i| {
            let s = self.fields[i].2;
            let ops: Vec<Slot> = operands.iter().map(|o| self.field(o, i)).collect();
            let ops: Vec<&Slot> = ops.iter().collect();
            same(&self.field(l, i), &self.field(r, i), &ops, s)
        })
    }

    fn show(&self, v: &Vec<u8>) -> String {
        let fields: Vec<String> = (0..self.fields.len())
            .map(|i| {
                let (name, _, s) = &self.fields[i];
                format!(".{name}: {}", show(&self.field(v, i), *s))
            })
            .collect();
        format!("{{ {} }}", fields.join(", "))
    }

    fn keys(&self, v: &Vec<u8>) -> Vec<Option<Key>> {
        (0..self.fields.len())
            .map(|i| key(&self.field(v, i), self.fields[i].2))
            .collect()
    }

    fn key_names(&self) -> Vec<String> {
        self.fields
            .iter()
            .map(|(n, _, _)| format!(".{n}"))
            .collect()
    }
}

/// A fold's operation over a domain's values (`None`: it panicked).
pub type Op<'a, D> =
    dyn Fn(&<D as Domain>::Value, &<D as Domain>::Value) -> Option<<D as Domain>::Value> + 'a;

/// A comparator's relation over a domain's values (`None`: it panicked).
pub type Relation<'a, D> =
    dyn Fn(&<D as Domain>::Value, &<D as Domain>::Value) -> Option<bool> + 'a;

/// The third operands for the pair `(i, j)`: every edge value while both
/// are edges, then one step of a pseudo-random walk.
fn thirds<V: Clone>(vals: &[V], i: usize, j: usize) -> Vec<V> {
    if i < 24 && j < 24 {
        vals[..24.min(vals.len())].to_vec()
    } else {
        vec![vals[(i * 31 + j * 17) % vals.len()].clone()]
    }
}

/// The laws a fold's operation `op` breaks over `s` (associativity, and
/// commutativity when `commutative`): at most one counterexample each.
pub fn check_fold<D: Domain>(op: &Op<'_, D>, d: &D, commutative: bool) -> Vec<Finding> {
    let Some(vals) = d.values() else {
        return Vec::new();
    };
    let show = |v: &D::Value| d.show(v);
    let mut found = Vec::new();
    'assoc: for (i, a) in vals.iter().enumerate() {
        for (j, b) in vals.iter().enumerate() {
            for c in thirds(&vals, i, j) {
                let (Some(ab), Some(bc)) = (op(a, b), op(b, &c)) else {
                    continue;
                };
                let (Some(l), Some(r)) = (op(&ab, &c), op(a, &bc)) else {
                    continue;
                };
                if !d.same(&l, &r, &[a, b, &c]) {
                    found.push(Finding {
                        law: "associative".into(),
                        counterexample: format!(
                            "op(op(a, b), c) = {} but op(a, op(b, c)) = {} for a = {}, b = {}, c = {}",
                            show(&l),
                            show(&r),
                            show(a),
                            show(b),
                            show(&c)
                        ),
                    });
                    break 'assoc;
                }
            }
        }
    }
    if commutative {
        'comm: for a in &vals {
            for b in &vals {
                let (Some(l), Some(r)) = (op(a, b), op(b, a)) else {
                    continue;
                };
                if !d.same(&l, &r, &[a, b]) {
                    found.push(Finding {
                        law: "commutative".into(),
                        counterexample: format!(
                            "op(a, b) = {} but op(b, a) = {} for a = {}, b = {}",
                            show(&l),
                            show(&r),
                            show(a),
                            show(b)
                        ),
                    });
                    break 'comm;
                }
            }
        }
    }
    found
}

/// The law of strict weak orders the comparator breaks over `s`, asked as
/// the merge sort asks it, `less(a, b)`: `compare(&a, &b) == Less` (its
/// thunk):
/// at most one counterexample.
pub fn check_order<D: Domain>(less: &Relation<'_, D>, d: &D) -> Vec<Finding> {
    check_relation(less, d, "Less")
}

/// [`check_order`] of the relation `rel(a, b)`: `compare(&a, &b) ==
/// ANSWER` (`Less`, or `Greater`, which is a strict weak order exactly when
/// `Less` is), each counterexample naming that answer.
pub fn check_relation<D: Domain>(less: &Relation<'_, D>, d: &D, answer: &str) -> Vec<Finding> {
    let Some(vals) = d.values() else {
        return Vec::new();
    };
    let show = |v: &D::Value| d.show(v);
    let found = |law: &str, counterexample: String| {
        vec![Finding {
            law: law.into(),
            counterexample,
        }]
    };
    for a in &vals {
        if less(a, a) == Some(true) {
            return found(
                "irreflexive",
                format!("compare(a, a) is `{answer}` for a = {}", show(a)),
            );
        }
    }
    for a in &vals {
        for b in &vals {
            if less(a, b) == Some(true) && less(b, a) == Some(true) {
                return found(
                    "asymmetric",
                    format!(
                        "compare(a, b) and compare(b, a) are both `{answer}` for a = {}, b = {}",
                        show(a),
                        show(b)
                    ),
                );
            }
        }
    }
    for (i, a) in vals.iter().enumerate() {
        for (j, b) in vals.iter().enumerate() {
            for c in thirds(&vals, i, j) {
                let (Some(ab), Some(bc), Some(ac)) = (less(a, b), less(b, &c), less(a, &c)) else {
                    continue;
                };
                if ab && bc && !ac {
                    return found(
                        "transitive",
                        format!(
                            "compare(a, b) and compare(b, c) are `{answer}` but compare(a, c) is not, for a = {}, b = {}, c = {}",
                            show(a),
                            show(b),
                            show(&c)
                        ),
                    );
                }
                let (Some(ba), Some(cb), Some(ca)) = (less(b, a), less(&c, b), less(&c, a)) else {
                    continue;
                };
                if !ab && !ba && !bc && !cb && (ac || ca) {
                    return found(
                        "transitive in its ties",
                        format!(
                            "a ~ b and b ~ c (neither is `{answer}` either way) but not a ~ c for a = {}, b = {}, c = {}",
                            show(a),
                            show(b),
                            show(&c)
                        ),
                    );
                }
            }
        }
    }
    Vec::new()
}

/// The laws `dedup_by`'s `same(a, b)` (`a` the later element) breaks over
/// `s`, at most one counterexample: symmetric and transitive, a partial
/// equivalence. That is what makes comparing each element with the one
/// before it (the GPU) keep what comparing it with the last one kept
/// (`Vec::dedup_by`) keeps. Reflexivity is not needed: floats' `==` is
/// not reflexive (NaN) and still agrees.
pub fn check_same<D: Domain>(same: &Relation<'_, D>, d: &D) -> Vec<Finding> {
    let Some(vals) = d.values() else {
        return Vec::new();
    };
    let show = |v: &D::Value| d.show(v);
    let found = |law: &str, counterexample: String| {
        vec![Finding {
            law: law.into(),
            counterexample,
        }]
    };
    for a in &vals {
        for b in &vals {
            if let (Some(ab), Some(ba)) = (same(a, b), same(b, a)) {
                if ab != ba {
                    return found(
                        "symmetric",
                        format!(
                            "same(a, b) is {ab} but same(b, a) is {ba} for a = {}, b = {}",
                            show(a),
                            show(b)
                        ),
                    );
                }
            }
        }
    }
    for (i, a) in vals.iter().enumerate() {
        for (j, b) in vals.iter().enumerate() {
            for c in thirds(&vals, i, j) {
                if let (Some(true), Some(true), Some(false)) =
                    (same(a, b), same(b, &c), same(a, &c))
                {
                    return found(
                        "transitive",
                        format!(
                            "same(a, b) and same(b, c) are true but same(a, c) is false for a = {}, b = {}, c = {}",
                            show(a),
                            show(b),
                            show(&c)
                        ),
                    );
                }
            }
        }
    }
    Vec::new()
}

/// A partition_point predicate over an element and a query (`None`: it
/// panicked).
pub type Probe<'a, T, Q> =
    dyn Fn(&<T as Domain>::Value, &<Q as Domain>::Value) -> Option<bool> + 'a;

/// That `pred(x, q)` is monotone over sorted data, as a binary search
/// needs: for every query, true for the elements before some place and
/// false from there. The data's order is unknown here, so the check takes
/// every order it could have, by the value (a scalar) or by any one field
/// (a tuple's or struct's), ascending or descending: the law holds when in
/// one of them no element for which `pred` fails comes before one, with a
/// larger key, for which it holds, for any query. A NaN has no place in
/// an order and is left out.
pub fn check_monotone<T: Domain, Q: Domain>(pred: &Probe<'_, T, Q>, t: &T, q: &Q) -> Vec<Finding> {
    let (Some(elements), Some(queries)) = (t.values(), q.values()) else {
        return Vec::new();
    };
    let names = t.key_names();
    let keys: Vec<Vec<Option<Key>>> = elements.iter().map(|e| t.keys(e)).collect();
    let fields = keys.first().map_or(0, Vec::len);
    let mut first_break = None;
    for field in 0..fields {
        for descending in [false, true] {
            let mut order: Vec<(Key, usize)> = keys
                .iter()
                .enumerate()
                .filter_map(|(i, k)| k[field].map(|k| (k, i)))
                .collect();
            order.sort_by(|a, b| {
                let o = a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal);
                if descending {
                    o.reverse()
                } else {
                    o
                }
            });
            // The first query that breaks the law in this order, with the
            // first element it fails on and a later one, of another key,
            // it holds for.
            let broken = queries.iter().find_map(|query| {
                let mut failed: Option<(Key, usize)> = None;
                for &(k, i) in &order {
                    match pred(&elements[i], query) {
                        Some(false) if failed.is_none() => failed = Some((k, i)),
                        Some(true) => {
                            if let Some((fk, fi)) = failed {
                                if fk != k {
                                    return Some((fi, i, query.clone()));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                None
            });
            match broken {
                None => return Vec::new(),
                Some(b) if first_break.is_none() => first_break = Some((field, descending, b)),
                Some(_) => {}
            }
        }
    }
    let Some((field, descending, (a, b, query))) = first_break else {
        return Vec::new();
    };
    let orders = if names.is_empty() {
        "in ascending and in descending order".to_string()
    } else {
        format!(
            "in every order by a field ({}), ascending or descending",
            names.join(", ")
        )
    };
    let this = match names.get(field) {
        Some(name) => format!(
            "by `{name}`, {}",
            if descending {
                "descending"
            } else {
                "ascending"
            }
        ),
        None => format!(
            "in {} order",
            if descending {
                "descending"
            } else {
                "ascending"
            }
        ),
    };
    vec![Finding {
        law: "monotone".into(),
        counterexample: format!(
            "{orders}, it fails for an element before one it holds for: pred(a, q) is false but \
             pred(b, q) is true for a = {}, b = {}, q = {} (a before b {this})",
            t.show(&elements[a]),
            t.show(&elements[b]),
            q.show(&query)
        ),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold<T: Copy>(
        s: Scalar,
        from: impl Fn(&Slot) -> T,
        to: impl Fn(T) -> Slot,
        op: impl Fn(T, T) -> T,
    ) -> String {
        let call = |a: &Slot, b: &Slot| Some(to(op(from(a), from(b))));
        let laws: Vec<String> = check_fold(&call, &s, true)
            .into_iter()
            .map(|f| f.law)
            .collect();
        if laws.is_empty() {
            "clean".into()
        } else {
            laws.join(",")
        }
    }

    macro_rules! slot_of {
        ($t:ty) => {
            (
                |v: &Slot| <$t>::from_le_bytes(v[..size_of::<$t>()].try_into().unwrap()),
                |x: $t| {
                    let mut s = [0u8; SLOT];
                    s[..size_of::<$t>()].copy_from_slice(&x.to_le_bytes());
                    s
                },
            )
        };
    }

    /// Each operation is found to break exactly the laws it breaks (floats
    /// within the documented tolerance), over the element types the
    /// providers take.
    #[test]
    fn the_checks_find_the_laws_each_operation_breaks() {
        let (f32_from, f32_to) = slot_of!(f32);
        let (f64_from, f64_to) = slot_of!(f64);
        let (u8_from, u8_to) = slot_of!(u8);
        let (i8_from, i8_to) = slot_of!(i8);
        let (i64_from, i64_to) = slot_of!(i64);
        let (i128_from, i128_to) = slot_of!(i128);
        let cases = [
            ("f32 add", fold(Scalar::F32, f32_from, f32_to, |a, b| a + b)),
            ("f64 add", fold(Scalar::F64, f64_from, f64_to, |a, b| a + b)),
            ("f64 mul", fold(Scalar::F64, f64_from, f64_to, |a, b| a * b)),
            ("f32 max", fold(Scalar::F32, f32_from, f32_to, f32::max)),
            ("f32 sub", fold(Scalar::F32, f32_from, f32_to, |a, b| a - b)),
            (
                "f64 mean",
                fold(Scalar::F64, f64_from, f64_to, |a, b| (a + b) / 2.0),
            ),
            (
                "u8 wrapping add",
                fold(Scalar::U8, u8_from, u8_to, u8::wrapping_add),
            ),
            (
                "u8 saturating add",
                fold(Scalar::U8, u8_from, u8_to, u8::saturating_add),
            ),
            ("i64 min", fold(Scalar::I64, i64_from, i64_to, i64::min)),
            (
                "i8 saturating add",
                fold(Scalar::I8, i8_from, i8_to, i8::saturating_add),
            ),
            ("i64 left", fold(Scalar::I64, i64_from, i64_to, |a, _| a)),
            (
                "i128 wrapping mul",
                fold(Scalar::I128, i128_from, i128_to, i128::wrapping_mul),
            ),
            (
                "i128 wrapping sub",
                fold(Scalar::I128, i128_from, i128_to, i128::wrapping_sub),
            ),
        ];
        let got: Vec<String> = cases.iter().map(|(n, l)| format!("{n}: {l}")).collect();
        assert_eq!(
            got,
            [
                "f32 add: clean",
                "f64 add: clean",
                "f64 mul: clean",
                "f32 max: clean",
                "f32 sub: associative,commutative",
                "f64 mean: associative",
                "u8 wrapping add: clean",
                "u8 saturating add: clean",
                "i64 min: clean",
                "i8 saturating add: associative",
                "i64 left: commutative",
                "i128 wrapping mul: clean",
                "i128 wrapping sub: associative,commutative",
            ]
        );
    }

    #[test]
    fn comparators_are_checked_for_a_strict_weak_order() {
        let (from, _) = slot_of!(i32);
        let check = |less: fn(i32, i32) -> bool| {
            let call = |a: &Slot, b: &Slot| Some(less(from(a), from(b)));
            check_order(&call, &Scalar::I32)
                .into_iter()
                .map(|f| f.law)
                .collect::<Vec<_>>()
        };
        assert!(check(|a, b| a < b).is_empty());
        assert!(check(|a, b| (a & 0xf) < (b & 0xf)).is_empty());
        assert_eq!(check(|a, b| a <= b), ["irreflexive"]);
        assert_eq!(check(|a, b| a != b), ["asymmetric"]);
        assert_eq!(
            check(|a, b| a.wrapping_sub(b) < 0),
            ["asymmetric"],
            "a modular order (0 - MIN and MIN - 0 both wrap to MIN)"
        );
        assert_eq!(
            check(|a, b| (b as i64 - a as i64).rem_euclid(3) == 1),
            ["transitive"],
            "rock, paper, scissors"
        );
        assert_eq!(
            check(|a, b| b as i64 - a as i64 > 1),
            ["transitive in its ties"],
            "less by more than one: 0 ~ 1 and 1 ~ 2, but 0 < 2"
        );
    }

    #[test]
    fn same_relations_are_checked_for_symmetry_and_transitivity() {
        let (from, _) = slot_of!(i32);
        let check = |same: fn(i32, i32) -> bool| {
            let call = |a: &Slot, b: &Slot| Some(same(from(a), from(b)));
            check_same(&call, &Scalar::I32)
                .into_iter()
                .map(|f| f.law)
                .collect::<Vec<_>>()
        };
        assert!(check(|a, b| a == b).is_empty());
        assert!(check(|a, b| a >> 4 == b >> 4).is_empty());
        assert!(
            check(|_, _| false).is_empty(),
            "nothing the same: a partial equivalence"
        );
        assert_eq!(check(|a, b| a <= b), ["symmetric"]);
        assert_eq!(check(|a, b| a.abs_diff(b) < 10), ["transitive"]);
        let (from, _) = slot_of!(f32);
        let call = |a: &Slot, b: &Slot| Some(from(a) == from(b));
        assert!(
            check_same(&call, &Scalar::F32).is_empty(),
            "floats' == is no equivalence (NaN) but a partial one"
        );
    }

    #[test]
    fn partition_point_predicates_are_checked_for_monotonicity() {
        let (from, _) = slot_of!(i16);
        let (from_u, _) = slot_of!(u8);
        let check = |pred: fn(i16, u8) -> bool| {
            let call = |a: &Slot, q: &Slot| Some(pred(from(a), from_u(q)));
            let found: Vec<String> = check_monotone(&call, &Scalar::I16, &Scalar::U8)
                .into_iter()
                .map(|f| f.law)
                .collect();
            found
        };
        // Ascending data, descending data, a constant, a coarser key.
        assert!(check(|x, q| x < i16::from(q)).is_empty());
        assert!(check(|x, q| x > i16::from(q)).is_empty());
        assert!(check(|_, _| true).is_empty());
        assert!(check(|x, q| x / 16 <= i16::from(q) / 16).is_empty());
        // Parity and a window hold in no order.
        assert_eq!(check(|x, q| (x ^ i16::from(q)) & 1 == 0), ["monotone"]);
        assert_eq!(check(|x, q| x.abs_diff(i16::from(q)) < 10), ["monotone"]);
        // A call that panicked (`None`) is no evidence either way.
        let call = |a: &Slot, q: &Slot| {
            (from(a) % 3 != 0).then(|| (from(a) ^ i16::from(from_u(q))) & 1 == 0)
        };
        let found = check_monotone(&call, &Scalar::I16, &Scalar::U8);
        assert_eq!(
            found.len(),
            1,
            "parity still breaks the law where it answers"
        );
        let call = |a: &Slot, q: &Slot| (from(a) % 3 != 0).then(|| from(a) < i16::from(from_u(q)));
        assert!(check_monotone(&call, &Scalar::I16, &Scalar::U8).is_empty());
        // A float's NaN has no place in the order.
        let (ff, _) = slot_of!(f64);
        let call = |a: &Slot, q: &Slot| Some(ff(a) < ff(q));
        assert!(check_monotone(&call, &Scalar::F64, &Scalar::F64).is_empty());
        // A composite may be sorted by any of its fields.
        let pair = Composite {
            size: 8,
            fields: vec![("0".into(), 0, Scalar::U32), ("1".into(), 4, Scalar::I32)],
        };
        let field = |v: &Vec<u8>, at: usize| i32::from_le_bytes(v[at..at + 4].try_into().unwrap());
        let by_second = |a: &Vec<u8>, q: &Slot| Some(field(a, 4) < i32::from(from(q)));
        assert!(check_monotone(&by_second, &pair, &Scalar::I16).is_empty());
        let mixed =
            |a: &Vec<u8>, q: &Slot| Some((field(a, 0) ^ field(a, 4)) & 1 == i32::from(from(q)) & 1);
        let found = check_monotone(&mixed, &pair, &Scalar::I16);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .counterexample
                .contains("in every order by a field (.0, .1)"),
            "{}",
            found[0].counterexample
        );
    }

    #[test]
    fn values_cover_each_type_with_valid_bit_patterns() {
        for s in Scalar::ALL {
            let Some(vals) = values(s) else {
                assert!(matches!(s, Scalar::F16 | Scalar::F128), "{s:?}");
                continue;
            };
            assert!(vals.len() >= 2, "{s:?}");
            for v in &vals {
                assert_eq!(bits(v) & !mask(s), 0, "{s:?}: bytes above its size");
                if s == Scalar::Char {
                    assert!(char::from_u32(bits(v) as u32).is_some());
                }
            }
        }
        assert_eq!(show(&int_slot(u128::MAX, Scalar::I8), Scalar::I8), "-1");
        assert_eq!(
            show(&int_slot(1 << 127, Scalar::I128), Scalar::I128),
            i128::MIN.to_string()
        );
        assert_eq!(show(&int_slot(200, Scalar::U8), Scalar::U8), "200");
        assert_eq!(show(&float_slot(-3.25, Scalar::F32), Scalar::F32), "-3.25");
    }
}
