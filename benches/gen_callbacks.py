#!/usr/bin/env python3
"""Generates a Rust file with N registrations of varied admitted and rejected
callbacks, for the import and admission benchmarks. Deterministic.
Usage: gen_callbacks.py N [--associative]"""
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
n = int(args[0]) if args else 1000
# --associative: only associative and commutative shapes (all admitted), whose
# GPU results equal the sequential host fold: for GPU validation of big builds.
associative = "--associative" in sys.argv
out = ["#![allow(unused)]", "fn helper(a: i32, b: i32) -> i32 { if a > b { a.wrapping_sub(b) } else { b.wrapping_mul(3) } }"]
shapes = [
    "move |a, b| a.wrapping_add(b).wrapping_add(k{i})",
    "move |a, b| (a ^ b) & k{i}",
    "move |a, b| a.max(b).min(k{i})",
    "move |a, b| helper(a, b).wrapping_add(k{i})",
    "move |a, b| {{ let mut s = a; let mut j = 0; while j < 2 {{ s = s.wrapping_add(b); j += 1; }} s ^ k{i} }}",
    "|a, b| a.wrapping_add(b).wrapping_add(k{i})",
]
if associative:
    shapes = shapes[:3]
for i in range(n):
    shape = shapes[i % len(shapes)].format(i=i)
    out.append(f"pub fn entry{i}(data: &[i32], k{i}: i32) -> i32 {{ native::reduce(data, 0, {shape}) }}")
print("\n".join(out))
