//! Environment layout and packing, as data: case files in, snapshots out.

use manifest::{EnvLayout, Scalar};
use serde_json::Value;
use std::fmt::Write as _;

fn parse_captures(text: &str) -> Vec<(String, Scalar)> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (name, ty) = item.split_once(':').expect("case capture is name:scalar");
            (
                name.trim().to_string(),
                Scalar::from_name(ty.trim())
                    .unwrap_or_else(|| panic!("case file: unknown scalar {ty}")),
            )
        })
        .collect()
}

fn render(layout: &EnvLayout) -> String {
    let mut out = format!("size {} align {}\n", layout.size, layout.align);
    for f in &layout.fields {
        let _ = writeln!(
            out,
            "  {:<6} {:<5} offset {:>2} size {:>2} align {:>2}",
            f.name, f.scalar, f.offset, f.size, f.align
        );
    }
    out
}

#[test]
fn env_layouts() {
    let text = include_str!("cases/env_layouts.txt");
    let mut out = String::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (name, captures) = line.split_once(':').expect("case line is name: captures");
        let captures = parse_captures(captures);
        let _ = writeln!(out, "== {name}");
        match EnvLayout::from_captures(&captures) {
            Ok(layout) => {
                layout
                    .check()
                    .expect("a computed layout passes its own check");
                out.push_str(&render(&layout));
            }
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
            }
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn layout_check_rejects_edited_layouts() {
    let good = EnvLayout::from_captures(&[("k", Scalar::I32), ("m", Scalar::I64)]).unwrap();
    let mut out = String::new();
    let mut moved = good.clone();
    moved.fields[1].offset = 4;
    let mut shrunk = good.clone();
    shrunk.size = 12;
    let mut underaligned = good.clone();
    underaligned.align = 4;
    let mut retyped = good.clone();
    retyped.fields[0].scalar = Scalar::I64;
    let mut dropped = good.clone();
    dropped.fields.pop();
    for (name, layout) in [
        ("moved", moved),
        ("shrunk", shrunk),
        ("underaligned", underaligned),
        ("retyped", retyped),
        ("dropped", dropped),
    ] {
        let _ = writeln!(out, "{name}: {}", layout.check().unwrap_err());
    }
    insta::assert_snapshot!(out);
}

#[test]
fn env_packing() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("cases/env_packing.json")).unwrap();
    let mut out = String::new();
    for case in cases {
        let captures: Vec<(String, Scalar)> = case["captures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_str().unwrap().to_string(),
                    Scalar::from_name(c[1].as_str().unwrap()).unwrap(),
                )
            })
            .collect();
        let values: Vec<(String, Value)> = case["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v[0].as_str().unwrap().to_string(), v[1].clone()))
            .collect();
        let layout = EnvLayout::from_captures(&captures).unwrap();
        let _ = write!(out, "{}: ", case["name"].as_str().unwrap());
        match layout.pack(&values) {
            Ok(bytes) => {
                assert_eq!(bytes.len() as u64, layout.size);
                let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
                let _ = writeln!(out, "[{}]", hex.join(" "));
            }
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
            }
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn scalar_names_round_trip() {
    for s in Scalar::ALL {
        assert_eq!(Scalar::from_name(s.name()), Some(s));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, format!("\"{}\"", s.name()));
        assert_eq!(s.align(), s.size());
    }
    assert_eq!(Scalar::from_name("String"), None);
    let unknown = serde_json::from_str::<Scalar>("\"String\"").unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("unknown scalar type `String`; valid: `i8`"),
        "{unknown}"
    );
}

#[test]
fn half_and_quad_floats_are_no_environment_fields() {
    for s in [Scalar::F16, Scalar::F128] {
        assert!(!s.is_capturable());
        let text = format!(
            r#"{{"size": 16, "align": 16, "fields": [{{"name": "h", "scalar": "{s}", "offset": 0, "size": {n}, "align": {n}}}]}}"#,
            n = s.size()
        );
        let layout: EnvLayout = serde_json::from_str(&text).unwrap();
        let err = layout.check().unwrap_err().to_string();
        assert!(err.contains("no environment holds"), "{err}");
    }
}

#[test]
fn rustc_layouts_are_taken_as_measured_and_checked() {
    // rustc's layout of a closure capturing u8, u16, u32, f64, i8, i64, u16
    // (docs/closure-layout.md): fields reordered by alignment.
    let captures = [
        ("a", Scalar::U8, 24),
        ("b", Scalar::U16, 20),
        ("c", Scalar::U32, 16),
        ("d", Scalar::F64, 0),
        ("e", Scalar::I8, 25),
        ("f", Scalar::I64, 8),
        ("g", Scalar::U16, 22),
    ];
    let layout = EnvLayout::from_fields(&captures, 32, 8).unwrap();
    assert_eq!(layout.size, 32);
    let in_memory: Vec<&str> = layout
        .fields_by_offset()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(in_memory, ["d", "f", "c", "b", "g", "a", "e"]);
    // Packing follows the offsets.
    let values: Vec<(&str, Value)> = captures
        .iter()
        .enumerate()
        .map(|(i, (n, _, _))| (*n, Value::from(i as u64 + 1)))
        .collect();
    let bytes = layout.pack(&values).unwrap();
    assert_eq!(bytes[24], 1);
    assert_eq!(bytes[25], 5);
    assert_eq!(&bytes[0..8], &4f64.to_le_bytes()[..]);
    // Malformed layouts are refused, each with its reason.
    let refused = |fields: &[(&str, Scalar, u64)], size, align| {
        EnvLayout::from_fields(fields, size, align)
            .unwrap_err()
            .to_string()
    };
    let mut out = String::new();
    for (what, e) in [
        (
            "overlap",
            refused(&[("a", Scalar::I32, 0), ("b", Scalar::I16, 2)], 4, 4),
        ),
        ("misaligned", refused(&[("a", Scalar::I32, 2)], 8, 4)),
        ("outside", refused(&[("a", Scalar::I64, 8)], 8, 8)),
        ("size", refused(&[("a", Scalar::I64, 0)], 16, 8)),
        ("align", refused(&[("a", Scalar::I32, 0)], 4, 8)),
        (
            "duplicate",
            refused(&[("a", Scalar::I8, 0), ("a", Scalar::I8, 1)], 2, 1),
        ),
    ] {
        out.push_str(&format!("{what}: {e}\n"));
    }
    insta::assert_snapshot!(out);
}
