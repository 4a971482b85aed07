//! Which sort a sorting registration asks for, proved on its callback.
//!
//! A `sort_by` comparator such as `|a, b| b.cmp(a)`, `a.total_cmp(b)` or
//! `a.id.cmp(&b.id).then(b.t.cmp(&a.t))`, a `sort_by_key` key such as
//! `|p| p.id` or `|p| (p.t, p.id)`, and `sort` of integers are each a
//! lexicographic order on some of the element's scalar fields: such a sort
//! is a radix sort on those fields' bits, which on the GPU is about twice
//! as fast as a merge sort from 2^24 elements. This module proves it, on
//! the optimised MIR of the callback, or says why not.
//!
//! The proof has two steps.
//! 1. **Symbolic evaluation.** The body is run on two symbolic elements
//!    `a` and `b` (one for a key), every path of its (acyclic) control flow
//!    followed to its `return`. What it computes must be made of *atoms*:
//!    `Cmp(K(a), K(b))` (or `<`, `==`, … of the two), where `K` is a
//!    strictly increasing map of one scalar field — the field itself, a
//!    widening `as`, or `total_cmp`'s bit trick on a float's bits — so
//!    the atom is the field's own comparison under one [`KeyOrder`].
//!    `Cmp(K(b), K(a))` is the same atom reversed. Anything else (a call,
//!    an `assert` that may panic, arithmetic such as `a.x + a.y`, a
//!    capture) ends the proof.
//! 2. **Enumeration.** Atoms on different fields are independent: every
//!    combination of their outcomes (`Less`, `Equal`, `Greater` each)
//!    happens for some pair of elements. The comparator's answer is
//!    computed for all `3^k` combinations, and it must be the
//!    lexicographic order of some sequence of atoms, each ascending or
//!    descending: the first atom that is not `Equal` decides, all `Equal`
//!    is `Equal`. That sequence is the radix sort's keys, most significant
//!    first; a stable radix sort on them sorts exactly as the stable merge
//!    sort with the comparator does.

use std::collections::BTreeMap;

use vocab::{Element, KeyOrder, RadixKey, Scalar, SortChoice};

use crate::pmir::{
    BinOp, Body, BodyKind, Constant, Operand, Place, PreparedMir, Projection, Rvalue,
    StatementKind, TerminatorKind,
};
use crate::ty::Ty;

/// At most this many atoms (3^8 combinations).
const MAX_ATOMS: usize = 8;
/// At most this many paths through a body.
const MAX_PATHS: usize = 256;

/// How a sorting registration's callback is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortCallback {
    /// `Fn(&T, &T) -> Ordering` (`sort_by`, and `sort`'s natural order).
    Compare,
    /// `Fn(&T) -> K`, sorted by `K`'s `Ord` (`sort_by_key`).
    Key,
}

/// The sort the registration's callback `body` asks for, on elements of
/// type `element`.
pub fn sort_choice(
    doc: &PreparedMir,
    body: &str,
    callback: SortCallback,
    element: &Element,
) -> SortChoice {
    let Some(body) = doc.body(body) else {
        return SortChoice::merge(format!("no body `{body}` to prove an order on"));
    };
    match prove(body, callback, element) {
        Ok(keys) => SortChoice::Radix { keys },
        Err(reason) => SortChoice::merge(reason),
    }
}

fn prove(body: &Body, callback: SortCallback, element: &Element) -> Result<Vec<RadixKey>, String> {
    let sides = match callback {
        SortCallback::Compare => 2,
        SortCallback::Key => 1,
    };
    let (tree, atoms) = evaluate(body, sides, false)?;
    let order = match callback {
        SortCallback::Compare => lexicographic(&tree, &atoms)?,
        SortCallback::Key => key_sequence(&tree)?,
    };
    if order.is_empty() {
        return Err("the comparator says every two elements are equal".into());
    }
    order
        .into_iter()
        .map(|(atom, descending)| radix_key(element, atom, descending))
        .collect()
}

/// `body` run on `sides` symbolic elements (2 for a comparator, 1 for a
/// key function), every path: what it returns, and the atoms it compares.
fn evaluate(body: &Body, sides: u32, lenient: bool) -> Result<(Tree, Vec<Atom>), String> {
    let first = match body.kind {
        BodyKind::Closure => 2,
        _ => 1,
    };
    if body.arg_count + 1 != first + sides {
        return Err(format!(
            "the callback takes {} arguments, not {sides}",
            body.arg_count
        ));
    }
    let mut eval = Eval {
        body,
        first_arg: first,
        atoms: Vec::new(),
        paths: 0,
        lenient,
    };
    let tree = eval.block(0, &BTreeMap::new(), 0)?;
    Ok((tree, eval.atoms))
}

/// The radix key of `element` that `atom` compares.
fn radix_key(element: &Element, atom: Atom, descending: bool) -> Result<RadixKey, String> {
    let (field, offset, scalar) = field_of(element, &atom.path)?;
    if scalar.size() != atom.scalar.size() {
        return Err(format!("`{field}` is read as `{}`", atom.scalar.name()));
    }
    // CUB's radix keys are at most 8 bytes a field.
    if scalar.size() > 8 {
        return Err(format!("`{field}` is a {}-byte key", scalar.size()));
    }
    Ok(RadixKey {
        field,
        offset,
        scalar,
        order: atom.order,
        descending,
    })
}

/// The fields of `element` that a key function's key holds whole, each
/// through a strictly increasing map (the key terms of a radix sort):
/// the key itself, or those fields of a tuple key, the others passed over
/// (arithmetic, a call's result, a capture, a comparison). Two elements
/// with equal keys agree on every field returned: a key such as
/// `|v| (v % 7, *v)` holds only identical values equal, though it is no
/// radix key. An error says why the key was not read (it branches, or
/// writes into a place).
pub fn key_fields(
    doc: &PreparedMir,
    body: &str,
    element: &Element,
) -> Result<Vec<RadixKey>, String> {
    let body = doc
        .body(body)
        .ok_or_else(|| format!("no body `{body}` to read a key from"))?;
    let Tree::Leaf(key_value) = evaluate(body, 1, true)?.0 else {
        return Err("the key function branches".into());
    };
    let terms = match key_value {
        Val::Tuple(fields) => fields,
        v => vec![v],
    };
    Ok(terms
        .iter()
        .filter_map(|t| key(t).ok())
        .filter_map(|k| radix_key(element, k.atom, false).ok())
        .collect())
}

/// The field at `path` in `element`: how Rust writes it, its offset and
/// its scalar type.
fn field_of(element: &Element, path: &[u32]) -> Result<(String, u64, Scalar), String> {
    let mut e = element;
    let mut offset = 0;
    let mut name = String::new();
    for &i in path {
        let Element::Composite(l) = e else {
            return Err(format!("the element `{}` has no field {i}", element.name()));
        };
        let f = l
            .fields
            .get(i as usize)
            .ok_or_else(|| format!("`{}` has no field {i}", l.name))?;
        name.push('.');
        name.push_str(&f.name);
        offset += f.offset;
        e = &f.element;
    }
    match e {
        Element::Scalar(s) => Ok((name, offset, *s)),
        Element::Composite(l) => Err(format!("`{name}` is a `{}`, not a scalar", l.name)),
    }
}

/// A field compared under one order: the unit the enumeration assigns
/// outcomes to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Atom {
    path: Vec<u32>,
    /// The field's type as read (a float's bits read as `u32` are `u32`).
    scalar: Scalar,
    order: KeyOrder,
}

/// An `Ordering` as `discriminant` gives it.
type Ord3 = i8;
const LESS: Ord3 = -1;
const EQUAL: Ord3 = 0;
const GREATER: Ord3 = 1;

/// A symbolic value.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    /// `(*a).path`: a field of element `side` (0 is `a`), or the whole
    /// element or a part of it that is not a scalar.
    Elem {
        side: u32,
        path: Vec<u32>,
        ty: Ty,
    },
    /// A reference to such a value (the argument itself, `&(*a).0`).
    Ref {
        side: u32,
        path: Vec<u32>,
        ty: Ty,
    },
    Int {
        value: i128,
        ty: Ty,
    },
    Bool(bool),
    /// An `Ordering` constant.
    Ord(Ord3),
    /// An atom's outcome, as `Ordering`, reversed or not.
    Outcome {
        atom: usize,
        reversed: bool,
    },
    /// Whether an atom's outcome is in a set (`a.x < b.x`: `{Less}`).
    Test {
        atom: usize,
        set: [bool; 3],
    },
    /// `discriminant(v)` of an `Ordering` value.
    Discr(Box<Val>),
    /// `-x` of a float (an integer's may overflow or wrap: not modelled).
    Neg(Box<Val>),
    Cast {
        kind: String,
        ty: Ty,
        of: Box<Val>,
    },
    Bin {
        op: BinOp,
        l: Box<Val>,
        r: Box<Val>,
    },
    Tuple(Vec<Val>),
    /// Something the proof does not model.
    Opaque(String),
}

/// What a body returns on each path.
#[derive(Clone, Debug)]
enum Tree {
    Leaf(Val),
    /// `switchInt(discr)`: an arm per value, and the rest.
    Switch {
        discr: Val,
        arms: Vec<(u128, Tree)>,
        otherwise: Box<Tree>,
    },
    Unreachable,
}

struct Eval<'a> {
    body: &'a Body,
    /// The local of element `a`'s reference (`_2` for a closure).
    first_arg: u32,
    atoms: Vec<Atom>,
    paths: usize,
    /// Reads what the proof does not model as opaque values and goes on
    /// (a call's result, a capture, a comparison of no field, a path past
    /// an `assert`) instead of ending: for [`key_fields`], which asks
    /// what a key holds whole, not how it orders.
    lenient: bool,
}

type Env = BTreeMap<u32, Val>;

impl Eval<'_> {
    fn block(&mut self, id: u32, env: &Env, depth: usize) -> Result<Tree, String> {
        if depth > self.body.blocks.len() {
            return Err("the callback loops".into());
        }
        let block = self
            .body
            .blocks
            .iter()
            .find(|b| b.id.0 == id)
            .ok_or_else(|| format!("no block bb{id}"))?;
        let mut env = env.clone();
        for st in &block.statements {
            match &st.kind {
                StatementKind::Assign { place, rvalue } => {
                    if !place.projections.is_empty() {
                        return Err("the callback writes into a place".into());
                    }
                    let v = self.rvalue(rvalue, &env)?;
                    env.insert(place.local.0, v);
                }
                StatementKind::StorageLive(_)
                | StatementKind::StorageDead(_)
                | StatementKind::Nop(_) => {}
                other => return Err(format!("the callback has a statement {other:?}")),
            }
        }
        match &block.terminator.kind {
            TerminatorKind::Goto(t) => self.block(t.0, &env, depth + 1),
            TerminatorKind::Return => {
                self.paths += 1;
                if self.paths > MAX_PATHS {
                    return Err(format!("the callback has more than {MAX_PATHS} paths"));
                }
                Ok(Tree::Leaf(env.get(&0).cloned().unwrap_or(Val::Opaque(
                    "a return value never assigned".into(),
                ))))
            }
            TerminatorKind::Unreachable => Ok(Tree::Unreachable),
            TerminatorKind::SwitchInt {
                discr,
                targets,
                otherwise,
            } => {
                let discr = self.operand(discr, &env)?;
                // A value known on this path takes its arm.
                if let Some(bits) = known_bits(&discr) {
                    let next = targets
                        .iter()
                        .find(|(v, _)| *v == bits)
                        .map_or(*otherwise, |(_, t)| *t);
                    return self.block(next.0, &env, depth + 1);
                }
                let mut arms = Vec::new();
                for (value, target) in targets {
                    arms.push((*value, self.block(target.0, &env, depth + 1)?));
                }
                let otherwise = Box::new(self.block(otherwise.0, &env, depth + 1)?);
                Ok(Tree::Switch {
                    discr,
                    arms,
                    otherwise,
                })
            }
            // A panic leaves no key to compare.
            TerminatorKind::Assert { target, .. } if self.lenient => {
                self.block(target.0, &env, depth + 1)
            }
            TerminatorKind::Assert { .. } => {
                Err("the callback may panic (an `assert` of its MIR)".into())
            }
            TerminatorKind::Call {
                dest,
                callee,
                target,
                ..
            } if self.lenient && dest.projections.is_empty() => {
                env.insert(
                    dest.local.0,
                    Val::Opaque(format!("the result of `{}`", callee.path)),
                );
                match target {
                    Some(t) => self.block(t.0, &env, depth + 1),
                    None => Ok(Tree::Unreachable),
                }
            }
            TerminatorKind::Call { callee, .. } => {
                Err(format!("the callback calls `{}`", callee.path))
            }
            other => Err(format!("the callback ends a block with {other:?}")),
        }
    }

    fn operand(&mut self, op: &Operand, env: &Env) -> Result<Val, String> {
        match op {
            Operand::Copy(p) | Operand::Move(p) => self.place(p, env),
            Operand::Const(c) => Ok(match c {
                Constant::Int { value, ty } => Val::Int {
                    value: *value,
                    ty: ty.clone(),
                },
                Constant::Bool(b) => Val::Bool(*b),
                Constant::Other(text) => match text.rsplit("::").next() {
                    Some("Less") => Val::Ord(LESS),
                    Some("Equal") => Val::Ord(EQUAL),
                    Some("Greater") => Val::Ord(GREATER),
                    _ => Val::Opaque(format!("the constant `{text}`")),
                },
                other => Val::Opaque(format!("the constant {other:?}")),
            }),
        }
    }

    fn place(&mut self, place: &Place, env: &Env) -> Result<Val, String> {
        let local = place.local.0;
        let arg = local.checked_sub(self.first_arg);
        let mut v = match env.get(&local) {
            Some(v) => v.clone(),
            None => match arg {
                Some(side) if side < self.body.arg_count => Val::Ref {
                    side,
                    path: Vec::new(),
                    ty: self.body.locals[local as usize].ty.peel_refs().clone(),
                },
                _ if local == 1 && self.first_arg == 2 && self.lenient => {
                    Val::Opaque("a capture".into())
                }
                _ if local == 1 && self.first_arg == 2 => {
                    return Err("the callback reads its captures".into())
                }
                _ => return Err(format!("`_{local}` is read before it is assigned")),
            },
        };
        for p in &place.projections {
            v = match (p, v) {
                (Projection::Deref, Val::Ref { side, path, ty }) => Val::Elem { side, path, ty },
                (Projection::Field { index, ty }, Val::Elem { side, mut path, .. }) => {
                    path.push(*index);
                    Val::Elem {
                        side,
                        path,
                        ty: ty.clone(),
                    }
                }
                (Projection::Field { index, .. }, Val::Tuple(mut fields))
                    if (*index as usize) < fields.len() =>
                {
                    fields.swap_remove(*index as usize)
                }
                (_, Val::Opaque(what)) if self.lenient => Val::Opaque(what),
                (p, _) => return Err(format!("the callback reads a place through {p:?}")),
            };
        }
        Ok(v)
    }

    fn rvalue(&mut self, rv: &Rvalue, env: &Env) -> Result<Val, String> {
        Ok(match rv {
            Rvalue::Use(op) => self.operand(op, env)?,
            Rvalue::Ref { place, .. } => match self.place(place, env)? {
                Val::Elem { side, path, ty } => Val::Ref { side, path, ty },
                other => Val::Opaque(format!("a reference to {other:?}")),
            },
            Rvalue::Cast { kind, operand, ty } => Val::Cast {
                kind: kind.clone(),
                ty: ty.clone(),
                of: Box::new(self.operand(operand, env)?),
            },
            Rvalue::Discriminant(place) => Val::Discr(Box::new(self.place(place, env)?)),
            Rvalue::UnaryOp {
                op: crate::pmir::UnOp::Neg,
                operand,
            } => Val::Neg(Box::new(self.operand(operand, env)?)),
            Rvalue::BinaryOp { op, lhs, rhs } => {
                let l = self.operand(lhs, env)?;
                let r = self.operand(rhs, env)?;
                match self.binary(*op, l, r) {
                    Err(why) if self.lenient => Val::Opaque(why),
                    v => v?,
                }
            }
            Rvalue::Aggregate {
                kind: crate::pmir::AggregateKind::Tuple,
                fields,
            } => Val::Tuple(
                fields
                    .iter()
                    .map(|(_, o)| self.operand(o, env))
                    .collect::<Result<_, _>>()?,
            ),
            other => Val::Opaque(format!("{other:?}")),
        })
    }

    /// A comparison of two key terms is an atom; other operations stay
    /// terms (the bit trick of `total_cmp` is made of them).
    fn binary(&mut self, op: BinOp, l: Val, r: Val) -> Result<Val, String> {
        let set = match op {
            BinOp::Cmp => None,
            BinOp::Lt => Some([true, false, false]),
            BinOp::Le => Some([true, true, false]),
            BinOp::Eq => Some([false, true, false]),
            BinOp::Ne => Some([true, false, true]),
            BinOp::Ge => Some([false, true, true]),
            BinOp::Gt => Some([false, false, true]),
            _ => {
                return Ok(Val::Bin {
                    op,
                    l: Box::new(l),
                    r: Box::new(r),
                })
            }
        };
        if let (Val::Outcome { .. }, _) | (_, Val::Outcome { .. }) = (&l, &r) {
            return Err("the callback compares two `Ordering`s".into());
        }
        let (ka, kb) = (key(&l)?, key(&r)?);
        if ka.atom.path != kb.atom.path
            || ka.atom.order != kb.atom.order
            || ka.decreasing != kb.decreasing
        {
            return Err(format!(
                "the callback compares two different fields ({} and {})",
                show_path(&ka.atom.path),
                show_path(&kb.atom.path)
            ));
        }
        let reversed = ka.decreasing
            ^ match (ka.side, kb.side) {
                (0, 1) => false,
                (1, 0) => true,
                _ => return Err("the callback compares an element with itself".into()),
            };
        let atom = self.atom(ka.atom)?;
        Ok(match set {
            None => Val::Outcome { atom, reversed },
            Some(mut set) => {
                if reversed {
                    set.reverse();
                }
                Val::Test { atom, set }
            }
        })
    }

    fn atom(&mut self, atom: Atom) -> Result<usize, String> {
        if let Some(i) = self.atoms.iter().position(|a| *a == atom) {
            return Ok(i);
        }
        if let Some(other) = self.atoms.iter().find(|a| a.path == atom.path) {
            return Err(format!(
                "the callback orders {} two ways ({} and {})",
                show_path(&atom.path),
                other.order.name(),
                atom.order.name()
            ));
        }
        if self.atoms.len() == MAX_ATOMS {
            return Err(format!(
                "the callback compares more than {MAX_ATOMS} fields"
            ));
        }
        self.atoms.push(atom);
        Ok(self.atoms.len() - 1)
    }
}

fn show_path(path: &[u32]) -> String {
    if path.is_empty() {
        "the element".into()
    } else {
        let p: Vec<String> = path.iter().map(|i| format!(".{i}")).collect();
        format!("`{}`", p.concat())
    }
}

fn known_bits(v: &Val) -> Option<u128> {
    match v {
        Val::Discr(inner) => match **inner {
            Val::Ord(o) => Some(o as u8 as u128),
            _ => None,
        },
        Val::Bool(b) => Some(u128::from(*b)),
        Val::Int { value, .. } => Some(*value as u128),
        _ => None,
    }
}

/// A key term: a strictly increasing map of one field of one element.
struct KeyTerm {
    side: u32,
    atom: Atom,
    /// The map decreases (`total_cmp` of a negated float): the atom's
    /// outcome reversed.
    decreasing: bool,
}

/// The key term `v` is, or why it is none.
fn key(v: &Val) -> Result<KeyTerm, String> {
    match v {
        Val::Elem { side, path, ty } => match ty.scalar() {
            Some(s) if s.is_int() || matches!(s, Scalar::Bool | Scalar::Char) => Ok(KeyTerm {
                side: *side,
                decreasing: false,
                atom: Atom {
                    path: path.clone(),
                    scalar: s,
                    order: if s.is_signed() {
                        KeyOrder::Signed
                    } else {
                        KeyOrder::Unsigned
                    },
                },
            }),
            _ => Err(format!("the callback compares a `{ty}` directly")),
        },
        Val::Cast { kind, ty, of } if kind == "IntToInt" => {
            let inner = key(of)?;
            let to = ty.scalar().ok_or("a cast to a non-scalar")?;
            let from = inner.atom.scalar;
            let widening = to.is_int()
                && to.size() >= from.size()
                && (inner.atom.order == KeyOrder::Unsigned
                    && (to.size() > from.size() || to.is_unsigned())
                    || inner.atom.order == KeyOrder::Signed && to.is_signed());
            if !widening || inner.atom.order == KeyOrder::Total {
                return Err(format!(
                    "`as {}` of a `{}` does not keep its order",
                    to.name(),
                    from.name()
                ));
            }
            Ok(inner)
        }
        // A float's bits: `to_bits()` (unsigned), or as a signed integer.
        Val::Cast { kind, ty, of } if kind == "Transmute" => match &**of {
            Val::Elem {
                side,
                path,
                ty: from,
            } if from.scalar().is_some_and(Scalar::is_float) => {
                let to = ty.scalar().ok_or("a transmute to a non-scalar")?;
                if !to.is_unsigned() {
                    return Err("a float transmuted to a signed integer".into());
                }
                Ok(KeyTerm {
                    side: *side,
                    decreasing: false,
                    atom: Atom {
                        path: path.clone(),
                        scalar: from.scalar().unwrap_or(to),
                        order: KeyOrder::Unsigned,
                    },
                })
            }
            _ => Err("a transmute the proof does not model".into()),
        },
        _ => total_cmp_key(v).ok_or_else(|| describe(v)),
    }
}

/// `total_cmp`'s key: `s ^ (((s >> (N-1)) as uN >> 1) as iN)` where `s`
/// is the float's bits as `iN`.
fn total_cmp_key(v: &Val) -> Option<KeyTerm> {
    let Val::Bin {
        op: BinOp::BitXor,
        l,
        r,
    } = v
    else {
        return None;
    };
    let (side, path, float, negated) = float_bits_signed(l)?;
    let bits = float.size() as i128 * 8;
    // ((s >> (N-1)) as uN >> 1) as iN
    let Val::Cast { kind, of, .. } = &**r else {
        return None;
    };
    let Val::Bin {
        op: BinOp::Shr,
        l: shifted,
        r: one,
    } = &**of
    else {
        return None;
    };
    let Val::Cast {
        kind: k2, of: sign, ..
    } = &**shifted
    else {
        return None;
    };
    let Val::Bin {
        op: BinOp::Shr,
        l: s2,
        r: top,
    } = &**sign
    else {
        return None;
    };
    let int = |v: &Val, want: i128| matches!(v, Val::Int { value, .. } if *value == want);
    (kind == "IntToInt" && k2 == "IntToInt" && **s2 == **l && int(top, bits - 1) && int(one, 1))
        .then_some(KeyTerm {
            side,
            decreasing: negated,
            atom: Atom {
                path,
                scalar: float,
                order: KeyOrder::Total,
            },
        })
}

/// `(x as uN (Transmute)) as iN (IntToInt)` of a float field `x`, or of
/// `-x` (whose `total_cmp` order is `x`'s reversed, NaNs and zeros too:
/// negation flips the sign bit alone): element side, field, type, negated.
fn float_bits_signed(v: &Val) -> Option<(u32, Vec<u32>, Scalar, bool)> {
    let Val::Cast { kind, ty, of } = v else {
        return None;
    };
    let Val::Cast {
        kind: k2, of: f, ..
    } = &**of
    else {
        return None;
    };
    let (f, negated) = match &**f {
        Val::Neg(inner) => (&**inner, true),
        f => (f, false),
    };
    let Val::Elem {
        side,
        path,
        ty: fty,
    } = f
    else {
        return None;
    };
    let side = *side;
    let float = fty.scalar().filter(|s| s.is_float())?;
    let signed = ty
        .scalar()
        .filter(|s| s.is_signed() && s.size() == float.size())?;
    (kind == "IntToInt" && k2 == "Transmute" && signed.size() == float.size())
        .then(|| (side, path.clone(), float, negated))
}

fn describe(v: &Val) -> String {
    match v {
        Val::Bin { op, .. } => format!("the callback compares the result of `{op:?}`, not a field"),
        Val::Cast { kind, .. } => format!("the callback compares a `{kind}` cast"),
        Val::Neg(_) => "the callback compares a negated value".into(),
        Val::Opaque(what) => format!("the callback compares {what}"),
        Val::Int { .. } | Val::Bool(_) => "the callback compares a constant".into(),
        _ => "the callback compares something other than fields".into(),
    }
}

/// The answer of `tree` (an `Ordering`) for the atoms' outcomes `o`.
fn answer(tree: &Tree, o: &[Ord3]) -> Result<Ord3, String> {
    match tree {
        Tree::Leaf(v) => ordering(v, o),
        Tree::Unreachable => Err("a path the proof reaches is `unreachable`".into()),
        Tree::Switch {
            discr,
            arms,
            otherwise,
        } => {
            let bits = match discr {
                Val::Discr(v) => ordering(v, o)? as u8 as u128,
                Val::Test { atom, set } => u128::from(set[(o[*atom] + 1) as usize]),
                other => return Err(describe(other)),
            };
            let next = arms
                .iter()
                .find(|(v, _)| *v == bits)
                .map_or(&**otherwise, |(_, t)| t);
            answer(next, o)
        }
    }
}

fn ordering(v: &Val, o: &[Ord3]) -> Result<Ord3, String> {
    match v {
        Val::Ord(c) => Ok(*c),
        Val::Outcome { atom, reversed } => Ok(if *reversed { -o[*atom] } else { o[*atom] }),
        other => Err(format!("the comparator returns {}", describe_value(other))),
    }
}

fn describe_value(v: &Val) -> String {
    match v {
        Val::Opaque(what) => what.clone(),
        Val::Tuple(_) => "a tuple".into(),
        _ => "a value that is no comparison of fields".into(),
    }
}

/// Every combination of `k` outcomes.
fn combinations(k: usize) -> Vec<Vec<Ord3>> {
    let mut all = vec![Vec::new()];
    for _ in 0..k {
        all = all
            .into_iter()
            .flat_map(|c| {
                [LESS, EQUAL, GREATER].map(|x| {
                    let mut c = c.clone();
                    c.push(x);
                    c
                })
            })
            .collect();
    }
    all
}

/// The sequence of (atom, descending) whose lexicographic order the
/// comparator `tree` is, checked on every combination of outcomes.
fn lexicographic(tree: &Tree, atoms: &[Atom]) -> Result<Vec<(Atom, bool)>, String> {
    let table: Vec<(Vec<Ord3>, Ord3)> = combinations(atoms.len())
        .into_iter()
        .map(|o| answer(tree, &o).map(|r| (o, r)))
        .collect::<Result<_, _>>()?;
    let mut fixed: Vec<usize> = Vec::new();
    let mut order = Vec::new();
    loop {
        let live: Vec<&(Vec<Ord3>, Ord3)> = table
            .iter()
            .filter(|(o, _)| fixed.iter().all(|&i| o[i] == EQUAL))
            .collect();
        if live.iter().all(|(_, r)| *r == EQUAL) {
            return Ok(order
                .into_iter()
                .map(|(i, d): (usize, bool)| (atoms[i].clone(), d))
                .collect());
        }
        let next = (0..atoms.len())
            .filter(|i| !fixed.contains(i))
            .find_map(|i| {
                let decided = live.iter().filter(|(o, _)| o[i] != EQUAL);
                if decided.clone().all(|(o, r)| *r == o[i]) {
                    Some((i, false))
                } else if decided.clone().all(|(o, r)| *r == -o[i]) {
                    Some((i, true))
                } else {
                    None
                }
            });
        match next {
            Some((i, descending)) => {
                fixed.push(i);
                order.push((i, descending));
            }
            None => {
                return Err(
                    "the comparator is not a lexicographic order of its fields' comparisons".into(),
                )
            }
        }
    }
}

/// A key function's keys: the one key term it returns, or a tuple of them
/// (ordered lexicographically, as tuples are), all ascending.
fn key_sequence(tree: &Tree) -> Result<Vec<(Atom, bool)>, String> {
    let Tree::Leaf(v) = tree else {
        return Err("the key function branches".into());
    };
    let terms: Vec<&Val> = match v {
        Val::Tuple(fields) => fields.iter().collect(),
        v => vec![v],
    };
    let mut order: Vec<(Atom, bool)> = Vec::new();
    for t in terms {
        let k = key(t)?;
        // A repeated key decides nothing more.
        if order.iter().any(|(a, _)| *a == k.atom) {
            continue;
        }
        if order.iter().any(|(a, _)| a.path == k.atom.path) {
            return Err(format!(
                "the key orders {} two ways",
                show_path(&k.atom.path)
            ));
        }
        order.push((k.atom, false));
    }
    Ok(order)
}
