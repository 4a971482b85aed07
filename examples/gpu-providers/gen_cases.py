#!/usr/bin/env python3
"""Writes validate/src/cases.rs: for every element type, one GPU function
and one CPU-reference function per case, each a registration with its own
closure (a call site per element type: a macro would give every expansion
the same closure span). The harness (validate/src/main.rs) is generic and
calls these through `cases::<type>()`.

    python3 examples/gpu-providers/gen_cases.py   # rewrites validate/src/cases.rs

driver/tests/gpu_providers.rs checks that the committed file is this
script's output.
"""
import os
import re
import sys

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f32", "f64"]
TYPES = INTS + FLOATS


def cases(t):
    f = t in FLOATS
    add = "a + b" if f else "a.wrapping_add(b).wrapping_add(k)"
    out = []
    # (name, provider, kind, exact, gpu-closure, extra-params)
    # kind: fold (data, init, k) -> T; scan (data, init, k) -> Vec<T>;
    # map (data, k) -> Vec<U>; zip (a, b, k) -> Vec<V>; seg (data, offsets,
    # init, k) -> Vec<T>; select (data, k) -> Vec<T> (select, dedup_by); sort
    # (data) -> Vec<T>; segsort (data, offsets) -> Vec<T>.
    out.append(("reduce_add", "reduce", "fold", not f, f"move |a, b| {add}", t))
    out.append(("reduce_max", "reduce", "fold", True, "|a, b| a.max(b)", t))
    out.append(("inclusive_scan_add", "inclusive_scan", "scan", not f, f"move |a, b| {add}", t))
    out.append(("inclusive_scan_max", "inclusive_scan", "scan", True, "|a, b| a.max(b)", t))
    out.append(("exclusive_scan_add", "exclusive_scan", "scan", not f, f"move |a, b| {add}", t))
    # Associative, not commutative: the order of the operands shows.
    out.append(("exclusive_scan_right", "exclusive_scan", "scan", True, "|_a, b| b", t))
    if f:
        out.append(("transform_affine", "transform", "map", True, "move |x| x * 3.0 + k", t))
        out.append(("transform2_affine", "transform2", "zip", True, "move |a, b| a * k + b", (t, t)))
    else:
        out.append(("transform_affine", "transform", "map", True, "move |x| x.wrapping_mul(3).wrapping_add(k)", t))
        out.append(("transform2_affine", "transform2", "zip", True, "move |a, b| a.wrapping_mul(k).wrapping_add(b)", (t, t)))
    out.append(("transform_to_f64", "transform", "map_f64", True, "|x| x as f64 * 0.5", "f64"))
    out.append(("transform2_mixed", "transform2", "zip_mixed", True, "|a, b| a as f32 + b as f32", ("u8", "f32")))
    seg = "|a, b| a.max(b)" if f else "|a, b| a.wrapping_add(b)"
    out.append(("segmented_reduce", "segmented_reduce", "seg", True, seg, t))
    if f:
        # A float sum per segment: within the bound, and bit for bit the
        # GPU's combining order.
        out.append(("segmented_reduce_add", "segmented_reduce", "seg", False, "|a, b| a + b", t))
    if f:
        out.append(("select_above", "select", "select", True, "move |x| x > k", t))
        out.append(("partition_above", "partition", "partition", True, "move |x| *x > k", t))
        out.append(("sort_by", "sort_by", "sort", True, "|a, b| a.total_cmp(b)", t))
        out.append(("sort_by_key", "sort_by_key", "sort", True, "|x| (x / 16.0) as i32", t))
        # Each segment by the total order, and descending by a coarser key
        # (equal keys keep their order: the sort is stable).
        out.append(("segmented_sort_by", "segmented_sort_by", "segsort", True, "|a, b| a.total_cmp(b)", t))
        out.append(("segmented_sort_by_coarse", "segmented_sort_by", "segsort", True, "|a, b| ((*b / 16.0) as i32).cmp(&((*a / 16.0) as i32))", t))
        # Runs of one bucket of 256 (about one neighbour in eight).
        out.append(("dedup_by_bucket", "dedup_by", "select", True, "|a, b| (*a / 256.0) as i32 == (*b / 256.0) as i32", t))
        # Where each query goes in the ascending data: before the equal
        # ones, and by a scaled key (a capture).
        out.append(("partition_point_lower", "partition_point", "search", True, "|x, q| x < q", t))
        out.append(("partition_point_scaled", "partition_point", "search", True, "move |x, q| *x * k < *q", t))
        # 1024 bins of a shifted, scaled value (those past the last not
        # counted), and 20000 bins, more than a block counts in shared
        # memory.
        # Both inputs ascending: by the total order, and by a coarser key
        # (ties across the inputs: the first input's go first).
        out.append(("merge_by", "merge_by", "merge", True, "|a, b| a.total_cmp(b)", t))
        out.append(("merge_by_coarse", "merge_by", "merge", True, "|a, b| ((*a / 16.0) as i32).cmp(&((*b / 16.0) as i32))", t))
        out.append(("histogram_scaled", "histogram", "histogram", True, "move |x| ((x + 1000.0) * k) as usize", (t, 1024)))
        # Keys in runs (a segment index a run), each run's maximum and
        # running maximum; runs of keys in one bucket of three (several
        # runs of the harness's keys), their minimum.
        out.append(("reduce_by_key_max", "reduce_by_key", "bykey", True, "|a, b| a == b, |x, y| x.max(y)", t))
        out.append(("scan_by_key_max", "scan_by_key", "bykey", True, "|a, b| a == b, |x, y| x.max(y)", t))
        out.append(("reduce_by_key_bucket", "reduce_by_key", "bykey", True, "|a, b| (*a / 3.0).floor() == (*b / 3.0).floor(), |x, y| x.min(y)", t))
        out.append(("scan_by_key_bucket", "scan_by_key", "bykey", True, "|a, b| (*a / 3.0).floor() == (*b / 3.0).floor(), |x, y| x.min(y)", t))
        out.append(("histogram_wide", "histogram", "histogram", True, "|x| ((x + 1000.0) * 16.0) as usize", (t, 20000)))
    else:
        out.append(("select_above", "select", "select", True, "move |x| x > k", t))
        out.append(("partition_above", "partition", "partition", True, "move |x| *x > k", t))
        out.append(("sort_by", "sort_by", "sort", True, "|a, b| a.cmp(b)", t))
        out.append(("sort_by_key", "sort_by_key", "sort", True, "|x| x >> 4", t))
        # Each segment by value, and descending by a coarser key (equal
        # keys keep their order: the sort is stable).
        out.append(("segmented_sort_by", "segmented_sort_by", "segsort", True, "|a, b| a.cmp(b)", t))
        out.append(("segmented_sort_by_coarse", "segmented_sort_by", "segsort", True, "|a, b| (b >> 4).cmp(&(a >> 4))", t))
        # The element type's own order: no callback argument.
        out.append(("sort", "sort", "sort", True, None, t))
        out.append(("sort_unstable", "sort_unstable", "sort", True, None, t))
        # Runs of one class mod 4 (about one neighbour in four), the
        # class shifted by a capture.
        out.append(("dedup_by_class", "dedup_by", "select", True, "move |a, b| (*a ^ k) % 4 == (*b ^ k) % 4", t))
        # Where each query goes in the ascending data: after the equal
        # ones, and by a coarser key (a capture).
        out.append(("partition_point_upper", "partition_point", "search", True, "|x, q| x <= q", t))
        out.append(("partition_point_coarse", "partition_point", "search", True, "move |x, q| *x / k < *q / k", t))
        # The low byte, 256 bins; and 20000 bins (more than a block counts
        # in shared memory) of a residue of 20011 (those past the last not
        # counted), scaled by a capture.
        # Both inputs ascending: by the value, and by a coarser key (ties
        # across the inputs: the first input's go first).
        out.append(("merge_by", "merge_by", "merge", True, "|a, b| a.cmp(b)", t))
        out.append(("merge_by_coarse", "merge_by", "merge", True, "|a, b| (a >> 4).cmp(&(b >> 4))", t))
        out.append(("histogram_low_byte", "histogram", "histogram", True, "|x| (x as u64 & 255) as usize", (t, 256)))
        # Keys in runs (a segment index a run), a wrapping sum plus a
        # capture (associative) per run and running; runs of keys in one
        # bucket of `k` (several runs of the harness's keys), a maximum.
        out.append(("reduce_by_key_add", "reduce_by_key", "bykey", True, "|a, b| a == b, move |x, y| x.wrapping_add(y).wrapping_add(k)", t))
        out.append(("scan_by_key_add", "scan_by_key", "bykey", True, "|a, b| a == b, move |x, y| x.wrapping_add(y).wrapping_add(k)", t))
        out.append(("reduce_by_key_bucket", "reduce_by_key", "bykey", True, "move |a, b| *a / k == *b / k, |x, y| x.max(y)", t))
        out.append(("scan_by_key_bucket", "scan_by_key", "bykey", True, "move |a, b| *a / k == *b / k, |x, y| x.max(y)", t))
        out.append(("histogram_wide", "histogram", "histogram", True, "move |x| ((x as u64).wrapping_mul(k as u64) % 20011) as usize", (t, 20000)))
    return out


def call(args, closure):
    """A call's argument list: the closure last, when the call takes one."""
    return args if closure is None else f"{args}, {closure}"


def signatures(kind, t, out_t, exclusive):
    """(gpu params, host params, gpu call args, host call args, return type)."""
    if kind == "fold":
        return (f"d: &dyn Input<{t}>, init: {t}, k: {t}", f"d: &[{t}], init: {t}, k: {t}", "d, init", "d, init", t)
    if kind == "scan":
        args = "d, init" if exclusive else "d"
        return (f"d: &dyn Input<{t}>, init: {t}, k: {t}", f"d: &[{t}], init: {t}, k: {t}", args, args, f"Vec<{t}>")
    if kind in ("map", "select", "partition"):
        return (f"d: &dyn Input<{t}>, k: {t}", f"d: &[{t}], k: {t}", "d", "d", f"Vec<{t}>")
    if kind == "map_f64":
        return (f"d: &dyn Input<{t}>", f"d: &[{t}]", "d", "d", "Vec<f64>")
    if kind == "zip":
        return (f"a: &dyn Input<{t}>, b: &dyn Input<{t}>, k: {t}", f"a: &[{t}], b: &[{t}], k: {t}", "a, b", "a, b", f"Vec<{t}>")
    if kind == "zip_mixed":
        return (f"a: &dyn Input<{t}>, b: &dyn Input<u8>", f"a: &[{t}], b: &[u8]", "a, b", "a, b", "Vec<f32>")
    if kind == "seg":
        return (f"d: &dyn Input<{t}>, offsets: &[usize], init: {t}", f"d: &[{t}], offsets: &[usize], init: {t}", "d, offsets, init", "d, offsets, init", f"Vec<{t}>")
    if kind == "segsort":
        return (f"d: &dyn Input<{t}>, offsets: &[usize]", f"d: &[{t}], offsets: &[usize]", "d, offsets", "d, offsets", f"Vec<{t}>")
    if kind == "sort":
        return (f"d: &dyn Input<{t}>", f"d: &[{t}]", "d", "d", f"Vec<{t}>")
    if kind == "search":
        return (f"sorted: &dyn Input<{t}>, queries: &dyn Input<{t}>, k: {t}", f"sorted: &[{t}], queries: &[{t}], k: {t}", "sorted, queries", "sorted, queries", "Vec<usize>")
    if kind == "merge":
        return (f"a: &dyn Input<{t}>, b: &dyn Input<{t}>", f"a: &[{t}], b: &[{t}]", "a, b", "a, b", f"Vec<{t}>")
    if kind == "bykey":
        return (f"keys: &dyn Input<{t}>, values: &dyn Input<{t}>, k: {t}", f"keys: &[{t}], values: &[{t}], k: {t}", "keys, values", "keys, values", f"Vec<{t}>")
    if kind == "histogram":
        bins = out_t[1]
        return (f"d: &dyn Input<{t}>, k: {t}", f"d: &[{t}], k: {t}", f"d, {bins}", f"d, {bins}", "Vec<u64>")
    raise ValueError(kind)


# The cases that write into a buffer of the caller's (the `_into` forms),
# one per provider that has one; every other case takes the call's own
# device result.
INTO = {"inclusive_scan_add", "exclusive_scan_add", "transform_affine", "transform2_affine", "segmented_reduce"}


def gpu_body(name, provider, kind, args, ret, closure):
    """The GPU function's body: the call, and the copy of a device result
    to the host."""
    if kind == "fold":
        return f"    gpu.{provider}({call(args, closure)})\n"
    if kind == "partition":
        # Both halves, kept then rejected, as one vector.
        return (
            f"    let (kept, rejected) = gpu.{provider}({call(args, closure)})?;\n"
            f"    let mut out = kept.to_vec()?;\n"
            f"    out.extend(rejected.to_vec()?);\n"
            f"    Ok(out)\n"
        )
    if provider == "reduce_by_key":
        # Each run's key, then each run's fold, as one vector.
        return (
            f"    let (keys, folds) = gpu.{provider}({call(args, closure)})?;\n"
            f"    let mut out = keys.to_vec()?;\n"
            f"    out.extend(folds.to_vec()?);\n"
            f"    Ok(out)\n"
        )
    if name not in INTO:
        return f"    gpu.{provider}({call(args, closure)})?.to_vec()\n"
    elem = ret[len("Vec<"):-1]
    length = "offsets.len().saturating_sub(1)" if kind == "seg" else args.split(",")[0] + ".len()"
    inputs, rest = {"scan": ("d", args[len("d"):]), "map": ("d", ""), "zip": ("a, b", ""), "seg": ("d, offsets", args[len("d, offsets"):])}[kind]
    return (
        f"    let mut out = gpu.alloc::<{elem}>({length})?;\n"
        f"    gpu.{provider}_into({inputs}, &mut out{rest}, {closure})?;\n"
        f"    out.to_vec()\n"
    )


def cpu_body(provider, kind, args, closure):
    """The CPU reference's body: the registration's host call (a
    partition's halves as one vector, kept then rejected; reduce_by_key's
    keys, then its folds)."""
    if kind == "partition" or provider == "reduce_by_key":
        return (
            f"    let (mut kept, rejected) = native::{provider}({call(args, closure)});\n"
            f"    kept.extend(rejected);\n"
            f"    kept\n"
        )
    return f"    native::{provider}({call(args, closure)})\n"


def entry(name, provider, kind, exact, t):
    """The table entry: an `Op` variant wrapping the two functions."""
    g, h = f"gpu_{name}_{t}", f"cpu_{name}_{t}"
    e = "true" if exact else "false"
    variant = {
        "fold": "Fold",
        "scan": "Scan",
        "map": "Map",
        "select": "Map",
        "partition": "Map",
        "map_f64": "MapF64",
        "zip": "Zip",
        "zip_mixed": "ZipMixed",
        "seg": "Seg",
        "sort": "Sort",
        "segsort": "SegSort",
        "search": "Search",
        "merge": "Merge",
        "histogram": "Histogram",
        "bykey": "ByKey",
    }[kind]
    if provider == "inclusive_scan":
        variant = "InclusiveScan"
    if not has_order(kind, exact):
        order = "None"
    elif kind == "fold":
        order = f"Some(Order::Fold(ord_{name}_{t}))"
    elif kind == "seg":
        order = f"Some(Order::Segments(ord_{name}_{t}))"
    else:
        order = f"Some(Order::Scan(ord_{name}_{t}))"
    return f'        Case {{ name: "{name}", provider: "{provider}", exact: {e}, op: Op::{variant}({g}, {h}), order: {order} }},\n'


def has_order(kind, exact):
    """Float sums of the scans, reduce and segmented reduce are also checked
    bit for bit against the GPU's combining order (validate/src/order.rs)."""
    return kind in ("scan", "fold", "seg") and not exact


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "validate", "src", "cases.rs")
    text = [
        "// Generated by examples/gpu-providers/gen_cases.py. Do not edit.\n",
        "//! One GPU function and one CPU reference per case and element type.\n\n",
        "use crate::{Case, Op, Order};\n",
        "use native::gpu::{Error, Gpu, Input};\n",
    ]
    for t in TYPES:
        text.append(f"\n// ---- {t}\n")
        for (name, provider, kind, exact, closure, out_t) in cases(t):
            gp, hp, ga, ha, ret = signatures(kind, t, out_t, provider == "exclusive_scan")
            uses_k = closure is not None and re.search(r"\bk\b", closure.split("|", 2)[2]) is not None
            if "k:" in gp and not uses_k:
                gp = gp.replace("k: ", "_k: ")
                hp = hp.replace("k: ", "_k: ")
            if kind == "scan" and provider == "inclusive_scan":
                gp = gp.replace("init: ", "_init: ")
                hp = hp.replace("init: ", "_init: ")
            text.append(
                f"pub fn gpu_{name}_{t}(gpu: &Gpu, {gp}) -> Result<{ret}, Error> {{\n"
                f"{gpu_body(name, provider, kind, ga, ret, closure)}}}\n\n"
                f"pub fn cpu_{name}_{t}({hp}) -> {ret} {{\n"
                f"{cpu_body(provider, kind, ha, closure)}}}\n\n"
            )
            if has_order(kind, exact) and kind == "fold":
                text.append(
                    f"pub fn ord_{name}_{t}({hp}, shape: crate::order::FoldShape) -> {ret} {{\n"
                    f"    crate::order::{provider}({ha}, shape, {closure})\n}}\n\n"
                )
            elif has_order(kind, exact) and kind == "seg":
                text.append(
                    f"pub fn ord_{name}_{t}({hp}, shape: crate::order::FoldShape) -> {ret} {{\n"
                    f"    crate::order::{provider}({ha}, shape.block, shape.misalignment, {closure})\n}}\n\n"
                )
            elif has_order(kind, exact):
                size = {"f32": 4, "f64": 8}[t] if t in FLOATS else int(re.sub(r"\D", "", t)) // 8
                text.append(
                    f"pub fn ord_{name}_{t}({hp}) -> {ret} {{\n"
                    f"    let (block, items) = crate::order::tile({size});\n"
                    f"    crate::order::{provider}({ha}, block, items, {closure})\n}}\n\n"
                )
        text.append(f"pub fn cases_{t}() -> Vec<Case<{t}>> {{\n    vec![\n")
        for (name, provider, kind, exact, closure, out_t) in cases(t):
            text.append(entry(name, provider, kind, exact, t))
        text.append("    ]\n}\n")
    new = "".join(text)
    if "--check" in sys.argv:
        old = open(path).read() if os.path.exists(path) else ""
        if old != new:
            print(f"{path} is not gen_cases.py's output: run python3 {os.path.relpath(__file__)}", file=sys.stderr)
            sys.exit(1)
        return
    open(path, "w").write(new)


if __name__ == "__main__":
    main()
