#!/usr/bin/env python3
"""Reads gen.py's program output: counts mixes, captures, agreements.
Exits 1 on any disagreement."""
import ast
import sys


def parse(path):
    rows = {}
    for line in open(path):
        i, ty, probe, real, bytes_ok, search = line.rstrip("\n").split("|")
        ps, pa, po = probe.split(" ", 2)
        rs, ra, ro = real.split(" ", 2)
        s = search.split()
        rows[int(i)] = dict(ty=ty.split(), ps=int(ps), pa=int(pa), po=ast.literal_eval(po),
                            rs=int(rs), ra=int(ra), ro=ast.literal_eval(ro),
                            bytes_ok=bytes_ok == "true", ds=int(s[0]), da=int(s[1]),
                            found=s[2:])
    return rows


def main():
    rows = parse(sys.argv[1])
    bad, captures, searched, ambiguous = [], 0, 0, 0
    for i, r in rows.items():
        captures += len(r["ty"])
        why = []
        if (r["ps"], r["pa"], r["po"]) != (r["rs"], r["ra"], r["ro"]):
            why.append("probe struct != closure field addresses")
        if not r["bytes_ok"]:
            why.append("closure bytes at the field offsets != captured values")
        if (r["ds"], r["da"]) != (r["ps"], r["pa"]):
            why.append("value closure size/align != probe")
        for k, f in enumerate(r["found"]):
            if f == "b":
                continue
            if f in ("none", "many"):
                ambiguous += 1
                continue
            searched += 1
            if int(f) != r["po"][k]:
                why.append(f"byte search finds capture {k} at {f}, the probe at {r['po'][k]}")
        if why:
            bad.append((i, " ".join(r["ty"]), why))
    print(f"{sys.argv[1]}: {len(rows)} mixes, {captures} captures, {searched} also located "
          f"by byte search ({ambiguous} ambiguous), {len(bad)} disagreements")
    for b in bad[:5]:
        print("   ", b)
    sys.exit(1 if bad else 0)


main()
