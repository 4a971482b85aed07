//! Prepared MIR printed back as MIR-like text, for `rmir.unsupported`.

use frontend::pmir::{
    AggregateKind, Constant, Operand, Place, Projection, Rvalue, StatementKind, TerminatorKind,
};

pub fn place(p: &Place) -> String {
    let mut s = format!("_{}", p.local.0);
    for proj in &p.projections {
        s = match proj {
            Projection::Deref => format!("(*{s})"),
            Projection::Field { index, ty } => format!("({s}.{index}: {ty})"),
            Projection::Index(l) => format!("{s}[_{}]", l.0),
            Projection::ConstantIndex {
                offset,
                min_length,
                from_end,
            } => format!(
                "{s}[{}{offset} of {min_length}]",
                if *from_end { "-" } else { "" }
            ),
            Projection::Downcast(v) => format!("({s} as {v})"),
        };
    }
    s
}

pub fn operand(o: &Operand) -> String {
    match o {
        Operand::Copy(p) => format!("copy {}", place(p)),
        Operand::Move(p) => format!("move {}", place(p)),
        Operand::Const(c) => match c {
            Constant::Int { value, ty } => format!("const {value}_{ty}"),
            Constant::Float { text, .. } => format!("const {text}"),
            Constant::Bool(b) => format!("const {b}"),
            Constant::Char(c) => format!("const {c:?}"),
            Constant::Unit => "const ()".into(),
            Constant::ZeroSized(ty) => format!("const ZeroSized: {ty}"),
            Constant::FnItem(name) => name.clone(),
            Constant::Other(text) => format!("const {text}"),
        },
    }
}

fn operands(list: &[Operand]) -> String {
    list.iter().map(operand).collect::<Vec<_>>().join(", ")
}

pub fn rvalue(r: &Rvalue) -> String {
    match r {
        Rvalue::Use(o) => operand(o),
        Rvalue::BinaryOp { op, lhs, rhs } => {
            format!("{op:?}({}, {})", operand(lhs), operand(rhs))
        }
        Rvalue::CheckedBinaryOp { op, lhs, rhs } => {
            format!("{op:?}WithOverflow({}, {})", operand(lhs), operand(rhs))
        }
        Rvalue::UnaryOp { op, operand: o } => format!("{op:?}({})", operand(o)),
        Rvalue::Cast {
            kind,
            operand: o,
            ty,
        } => format!("{} as {ty} ({kind})", operand(o)),
        Rvalue::Ref { mutable, place: p } => {
            format!("&{}{}", if *mutable { "mut " } else { "" }, place(p))
        }
        Rvalue::RawPtr { mutable, place: p } => {
            format!(
                "&raw {} {}",
                if *mutable { "mut" } else { "const" },
                place(p)
            )
        }
        Rvalue::Aggregate { kind, fields } => {
            let inner = fields
                .iter()
                .map(|(n, o)| match n {
                    Some(n) => format!("{n}: {}", operand(o)),
                    None => operand(o),
                })
                .collect::<Vec<_>>()
                .join(", ");
            match kind {
                AggregateKind::Tuple => format!("({inner})"),
                AggregateKind::Array => format!("[{inner}]"),
                AggregateKind::Closure { ty } => format!("{ty} {{ {inner} }}"),
                AggregateKind::Adt(name) => format!("{name} {{ {inner} }}"),
                AggregateKind::RawPtr { ty } => format!("{ty} from ({inner})"),
            }
        }
        Rvalue::Discriminant(p) => format!("discriminant({})", place(p)),
        Rvalue::Repeat { operand: o, count } => format!("[{}; {count}]", operand(o)),
        Rvalue::Len(p) => format!("Len({})", place(p)),
        Rvalue::Other(text) => text.clone(),
    }
}

pub fn statement(s: &StatementKind) -> String {
    match s {
        StatementKind::Assign {
            place: p,
            rvalue: r,
        } => format!("{} = {}", place(p), rvalue(r)),
        StatementKind::StorageLive(l) => format!("StorageLive(_{})", l.0),
        StatementKind::StorageDead(l) => format!("StorageDead(_{})", l.0),
        StatementKind::SetDiscriminant { place: p, variant } => {
            format!("discriminant({}) = {variant}", place(p))
        }
        StatementKind::Nop(text) | StatementKind::Opaque(text) => text.clone(),
        StatementKind::Unparsed { text, .. } => text.clone(),
    }
}

pub fn terminator(t: &TerminatorKind) -> String {
    match t {
        TerminatorKind::Goto(b) => format!("goto -> bb{}", b.0),
        TerminatorKind::SwitchInt {
            discr,
            targets,
            otherwise,
        } => {
            let mut arms: Vec<String> = targets
                .iter()
                .map(|(v, b)| format!("{v}: bb{}", b.0))
                .collect();
            arms.push(format!("otherwise: bb{}", otherwise.0));
            format!("switchInt({}) -> [{}]", operand(discr), arms.join(", "))
        }
        TerminatorKind::Return => "return".into(),
        TerminatorKind::Unreachable => "unreachable".into(),
        TerminatorKind::UnwindResume => "resume".into(),
        TerminatorKind::Assert {
            cond,
            expected,
            message,
            target,
            ..
        } => format!(
            "assert({}{}, {message:?}) -> bb{}",
            if *expected { "" } else { "!" },
            operand(cond),
            target.0
        ),
        TerminatorKind::Call {
            dest,
            callee,
            args,
            target,
            ..
        } => format!(
            "{} = {}({}){}",
            place(dest),
            callee.text,
            operands(args),
            target.map(|b| format!(" -> bb{}", b.0)).unwrap_or_default()
        ),
        TerminatorKind::Drop {
            place: p, target, ..
        } => {
            format!("drop({}) -> bb{}", place(p), target.0)
        }
        TerminatorKind::Unparsed { text, .. } => text.clone(),
    }
}
