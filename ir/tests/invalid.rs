//! Malformed or invalid rmir text: each file in tests/invalid/ names the
//! diagnostic it must produce on its first line, `// expect: LINE:COL: text`
//! (rejected by MLIR's parser and the IRDL verifier) or `// verify: LINE:COL:
//! text` (parses, rejected by `ir::verify`'s module rules).

use std::path::Path;

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let first = text.lines().next().unwrap_or_default();
    let (stage, want) = first
        .strip_prefix("// expect: ")
        .map(|w| ("parse", w))
        .or_else(|| first.strip_prefix("// verify: ").map(|w| ("verify", w)))
        .ok_or("first line must be `// expect: …` or `// verify: …`")?;
    let (line, rest) = want.split_once(':').ok_or("no line")?;
    let (col, message) = rest.split_once(": ").ok_or("no column")?;
    let context = ir::context().map_err(|e| e.to_string())?;
    let diagnostics = match (stage, ir::parse(&context, &text)) {
        ("parse", Err(e)) => e.diagnostics,
        ("parse", Ok(_)) => return Err("parsed, but should not".into()),
        (_, Err(e)) => return Err(format!("does not parse: {e}")),
        (_, Ok(module)) => match ir::verify(&module) {
            Err(e) => e.diagnostics,
            Ok(()) => return Err("verified, but should not".into()),
        },
    };
    let at = format!(":{line}:{col}");
    let found = diagnostics
        .iter()
        .any(|d| d.message.contains(message) && d.location.contains(&at));
    if found {
        Ok(())
    } else {
        Err(format!(
            "expected `{message}` at {at}, got:\n{}",
            diagnostics
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ))
    }
}

#[test]
fn invalid_modules_are_rejected_with_located_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "case files missing in {}", dir.display());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| check(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The parser reads the text it is given and nothing after it. The input
/// fuzz/ mlir_parse crashed on ends inside a string literal; followed in
/// memory by 16 MiB of `(`, MLIR's lexer, which finds the end of its
/// buffer by a NUL after it, read on past the text until the stack
/// overflowed (before `ir::parse` parsed a NUL-terminated copy). Now it is
/// an unterminated string at the text's last line.
#[test]
fn the_parser_stops_at_the_end_of_its_text() {
    let context = ir::context().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/regressions/unterminated_string_then_parens.mlir");
    let input = std::fs::read(&path).unwrap();
    let mut memory = input.clone();
    memory.extend(std::iter::repeat_n(b'(', 16 << 20));
    let text = std::str::from_utf8(&memory[..input.len()]).unwrap();
    let error = match ir::parse(&context, text) {
        Ok(_) => panic!("{}: parsed, but should not", path.display()),
        Err(e) => e,
    };
    assert!(
        error
            .diagnostics
            .iter()
            .any(|d| d.location.contains(":3:8690")
                && d.message.contains("expected '\"' in string literal")),
        "{error}"
    );
}
