//! `core`'s `NonZero` transmutes, which optimised MIR inlines from
//! `NonZero::new` and `NonZero::get` (`checked_ilog2`, `ilog10`, `isqrt`'s
//! callers): an integer transmuted to `Option<NonZero<T>>`, whose niche
//! makes zero `None`, and a `NonZero<T>` transmuted back to `T`. The GPU
//! side lays enums out without niches (`frontend::adt`), so each becomes
//! what it means: a branch on zero that builds `None` or
//! `Some(NonZero(v))`, and a read of the `NonZero`'s field.

use crate::pmir::{
    AggregateKind, Block, BlockId, Body, LocalDecl, Operand, Place, Projection, Rvalue, Statement,
    StatementKind, Terminator, TerminatorKind,
};
use crate::ty::Ty;

/// Rewrites the `NonZero` transmutes of every body.
pub(crate) fn expand(bodies: &mut [Body]) {
    for body in bodies.iter_mut() {
        let mut b = 0;
        while b < body.blocks.len() {
            if !split_at_new(body, b) {
                b += 1;
            }
        }
        gets_as_fields(body);
    }
}

/// `T` when `ty` is `std::num::NonZero<T>`.
fn non_zero_of(ty: &Ty) -> Option<&Ty> {
    match ty {
        Ty::Adt { path, args } if path == "std::num::NonZero" || path == "core::num::NonZero" => {
            args.first()
                .filter(|t| t.scalar().is_some_and(|s| s.is_int()))
        }
        _ => None,
    }
}

/// `NonZero<T>` when `ty` is `Option<NonZero<T>>`.
fn option_of_non_zero(ty: &Ty) -> Option<&Ty> {
    match ty {
        Ty::Adt { path, args } if path.ends_with("option::Option") => {
            args.first().filter(|t| non_zero_of(t).is_some())
        }
        _ => None,
    }
}

/// `_3 = copy _1 as Option<NonZero<u32>> (Transmute)` in block `b`: the
/// block ends in a `switchInt` on the value, to a block that writes `None`
/// and one that writes `Some(NonZero(v))`, both continuing in a block with
/// the statements after it and the original terminator. Whether it split.
fn split_at_new(body: &mut Body, b: usize) -> bool {
    let found = body.blocks[b].statements.iter().position(|st| {
        matches!(&st.kind, StatementKind::Assign { rvalue, .. }
            if matches!(&**rvalue, Rvalue::Cast { kind, ty, .. } if kind == "Transmute" && option_of_non_zero(ty).is_some()))
    });
    let Some(k) = found else { return false };
    let StatementKind::Assign { place, rvalue } = body.blocks[b].statements[k].kind.clone() else {
        return false;
    };
    let Rvalue::Cast {
        operand,
        ty: option_ty,
        ..
    } = *rvalue
    else {
        return false;
    };
    let Some(non_zero) = option_of_non_zero(&option_ty).cloned() else {
        return false;
    };
    let Some(inner) = non_zero_of(&non_zero).cloned() else {
        return false;
    };
    let line = body.blocks[b].statements[k].mir_line;
    let rest: Vec<Statement> = body.blocks[b].statements.split_off(k + 1);
    body.blocks[b].statements.pop();
    let after = body.blocks[b].terminator.clone();
    let id = |i: usize| BlockId(i as u32);
    let (none, some, cont) = (
        body.blocks.len(),
        body.blocks.len() + 1,
        body.blocks.len() + 2,
    );
    let value = body.locals.len();
    body.locals.push(LocalDecl {
        local: crate::pmir::Local(value as u32),
        ty: non_zero.clone(),
        mutable: false,
    });
    let assign = |place: Place, rvalue: Rvalue| Statement {
        mir_line: line,
        kind: StatementKind::Assign {
            place,
            rvalue: Box::new(rvalue),
        },
    };
    let block = |n: usize, statements: Vec<Statement>, kind: TerminatorKind| Block {
        id: id(n),
        mir_line: line,
        statements,
        terminator: Terminator {
            mir_line: line,
            kind,
        },
    };
    let option_name = format!("Option::<{non_zero}>");
    body.blocks[b].terminator = Terminator {
        mir_line: line,
        kind: TerminatorKind::SwitchInt {
            discr: operand.clone(),
            targets: vec![(0, id(none))],
            otherwise: id(some),
        },
    };
    body.blocks.push(block(
        none,
        vec![assign(
            place.clone(),
            Rvalue::Aggregate {
                kind: AggregateKind::Adt(format!("{option_name}::None")),
                fields: Vec::new(),
            },
        )],
        TerminatorKind::Goto(id(cont)),
    ));
    let local = Place::local(crate::pmir::Local(value as u32));
    body.blocks.push(block(
        some,
        vec![
            assign(
                local.clone(),
                Rvalue::Aggregate {
                    kind: AggregateKind::Adt(format!("NonZero::<{inner}>")),
                    fields: vec![(None, operand)],
                },
            ),
            assign(
                place,
                Rvalue::Aggregate {
                    kind: AggregateKind::Adt(format!("{option_name}::Some")),
                    fields: vec![(None, Operand::Move(local))],
                },
            ),
        ],
        TerminatorKind::Goto(id(cont)),
    ));
    body.blocks.push(Block {
        id: id(cont),
        mir_line: line,
        statements: rest,
        terminator: after,
    });
    true
}

/// `_9 = copy _6 as u32 (Transmute)` of a `NonZero<u32>`: its field.
fn gets_as_fields(body: &mut Body) {
    let mut found = Vec::new();
    for (b, block) in body.blocks.iter().enumerate() {
        for (k, st) in block.statements.iter().enumerate() {
            let StatementKind::Assign { rvalue, .. } = &st.kind else {
                continue;
            };
            let Rvalue::Cast {
                kind,
                operand: operand @ (Operand::Copy(p) | Operand::Move(p)),
                ty,
            } = &**rvalue
            else {
                continue;
            };
            let from = crate::pmir::operand_ty(body, operand);
            if kind == "Transmute" && from.as_ref().and_then(non_zero_of) == Some(ty) {
                let mut field = p.clone();
                field.projections.push(Projection::Field {
                    index: 0,
                    ty: ty.clone(),
                });
                found.push((b, k, field));
            }
        }
    }
    for (b, k, field) in found {
        if let StatementKind::Assign { rvalue, .. } = &mut body.blocks[b].statements[k].kind {
            **rvalue = Rvalue::Use(Operand::Copy(field));
        }
    }
}
