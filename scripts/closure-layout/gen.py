#!/usr/bin/env python3
"""The closure-layout experiment (docs/closure-layout.md): prints a Rust
program that, for seeded random capture mixes, measures

  (a) a probe `struct P(T0, T1, ...)`: offset_of!, size_of, align_of;
  (b) a real `move` closure capturing variables of those types, each
      mentioned once in that order: the addresses of its captured fields
      (addr_of! inside the body), size_of_val, align_of_val, and the bytes
      at those offsets;
  (c) a second closure with the same captures used by value in arithmetic,
      whose bytes are searched for each capture's distinct byte pattern
      (this reads padding, which is uninitialised: an experiment only).

Usage: gen.py SEED COUNT > probe.rs; check.py reads the program's output.
"""
import random
import sys

TYPES = ["i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
         "u128", "usize", "f32", "f64", "bool", "char"]
SIZE = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "i128": 16, "isize": 8, "u8": 1,
        "u16": 2, "u32": 4, "u64": 8, "u128": 16, "usize": 8, "f32": 4, "f64": 8,
        "bool": 1, "char": 4}


def pattern(k, t):
    """Capture k's bytes (little-endian host): (k+1)*16 + j; a valid char."""
    tag = ((k + 1) * 16) & 0xFF
    if t == "bool":
        return [1 if k % 2 == 0 else 0]
    if t == "char":
        return [tag, (tag + 1) & 0xFF, k & 0x0F, 0]
    return [(tag + j) & 0xFF for j in range(SIZE[t])]


def value(k, t):
    b = pattern(k, t)
    le = int.from_bytes(bytes(b), "little")
    if t == "bool":
        return "true" if b[0] else "false"
    if t == "char":
        return f"char::from_u32(0x{le:x}).unwrap()"
    if t in ("f32", "f64"):
        return f"{t}::from_bits(0x{le:x})"
    return f"{t}::from_le_bytes({b!r})"


def use_value(v, t):
    if t in ("f32", "f64"):
        return f"({v}.to_bits() as u64)"
    return f"({v} as u64)"


def gen_mix(i, tys, out):
    n = len(tys)
    out.append(f"#[allow(dead_code)] struct P{i}({', '.join(tys)});" if n
               else f"#[allow(dead_code)] struct P{i};")
    out.append(f"fn m{i}() {{")
    out.append(f"    let ty = \"{' '.join(tys)}\";")
    offsets = ", ".join(f"offset_of!(P{i}, {k})" for k in range(n))
    out.append(f"    let po: [usize; {n}] = [{offsets}];")
    for k, t in enumerate(tys):
        out.append(f"    let v{k}: {t} = {value(k, t)};")
    body = " ".join(f"o[{k}] = core::ptr::addr_of!(v{k}) as usize;" for k in range(n))
    out.append(f"    let c = move |o: &mut [usize; {n}]| {{ {body} let _ = o; }};")
    expr = " ^ ".join(f"{use_value(f'v{k}', t)}.rotate_left({k})"
                      for k, t in enumerate(tys)) or "0"
    out.append(f"    let d = move |acc: u64| -> u64 {{ acc ^ {expr} }};")
    out.append("    std::hint::black_box(d(1));")
    pats = ", ".join("&[" + ", ".join(str(x) for x in pattern(k, t)) + "][..]"
                     for k, t in enumerate(tys))
    aligns = ", ".join(f"core::mem::align_of::<{t}>()" for t in tys)
    isbool = ", ".join("true" if t == "bool" else "false" for t in tys)
    out.append(f"    let pats: [&[u8]; {n}] = [{pats}];")
    out.append(f"    let aligns: [usize; {n}] = [{aligns}];")
    out.append(f"    let isbool: [bool; {n}] = [{isbool}];")
    out.append(f"    report({i}, ty, &po, core::mem::size_of::<P{i}>(), "
               f"core::mem::align_of::<P{i}>(), &c, &d, &pats, &aligns, &isbool);")
    out.append("}")


PRELUDE = r'''
use core::mem::offset_of;
use std::fmt::Write;

#[allow(clippy::too_many_arguments)]
fn report<const N: usize, C: Fn(&mut [usize; N]), D: Fn(u64) -> u64>(
    i: usize, ty: &str, po: &[usize; N], ps: usize, pa: usize, c: &C, d: &D,
    pats: &[&[u8]; N], aligns: &[usize; N], isbool: &[bool; N],
) {
    let c = std::hint::black_box(c);
    let base = c as *const C as usize;
    let mut o = [0usize; N];
    c(&mut o);
    let ro: Vec<usize> = o.iter().map(|a| a.wrapping_sub(base)).collect();
    let rs = core::mem::size_of_val(c);
    let ra = core::mem::align_of_val(c);
    // The bytes at the address-derived offsets (fields only).
    let mut bytes_ok = true;
    for k in 0..N {
        let n = pats[k].len();
        if ro[k] + n > rs { bytes_ok = false; continue; }
        let p = c as *const C as *const u8;
        let got: Vec<u8> = (0..n).map(|j| unsafe { p.add(ro[k] + j).read_volatile() }).collect();
        if got != pats[k] { bytes_ok = false; }
    }
    // Search the value closure's bytes (reads padding: experiment only).
    let d = std::hint::black_box(d);
    let ds = core::mem::size_of_val(d);
    let dp = d as *const D as *const u8;
    let all: Vec<u8> = (0..ds).map(|j| unsafe { dp.add(j).read_volatile() }).collect();
    let mut found = String::new();
    for k in 0..N {
        if isbool[k] { found.push_str(" b"); continue; }
        let n = pats[k].len();
        let hits: Vec<usize> = (0..(ds + 1).saturating_sub(n))
            .filter(|&o| o % aligns[k] == 0 && &all[o..o + n] == pats[k])
            .collect();
        match hits.len() {
            1 => { let _ = write!(found, " {}", hits[0]); }
            0 => found.push_str(" none"),
            _ => found.push_str(" many"),
        }
    }
    println!("{i}|{ty}|{ps} {pa} {po:?}|{rs} {ra} {ro:?}|{bytes_ok}|{ds} {}{found}",
        core::mem::align_of_val(d));
}
'''


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    mixes = [[], ["bool"], ["char"], ["bool", "char"],
             "u8 u16 u32 f64 i8 i64 u16".split()]
    while len(mixes) < count:
        n = rng.randint(0, 12)
        mixes.append([rng.choice(TYPES) for _ in range(n)])
    out = [PRELUDE]
    for i, tys in enumerate(mixes):
        gen_mix(i, tys, out)
    out.append("fn main() {")
    out.extend(f"    m{i}();" for i in range(len(mixes)))
    out.append("}")
    print("\n".join(out))


main()
