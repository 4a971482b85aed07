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

/// A kind of nesting: its name, and a module nested `n` levels.
type Nest = (&'static str, fn(usize) -> String);

/// MLIR's parser recurses once a nesting level, with no limit of its own:
/// `ir::parse` refuses text nested deeper than `ir::nesting::MAX_NESTING`
/// (fuzz/ mlir_parse: a silent SIGSEGV, the stack overflowing on a few
/// thousand levels). Each construct that costs the parser the most stack a
/// level is read, verified, printed and read back at the limit on a thread
/// with 2 MiB of stack, as rayon's; 20,000 levels of it are refused there.
#[test]
fn nesting_is_bounded_below_what_the_stack_holds() {
    const MAX: usize = ir::nesting::MAX_NESTING;
    let nests: [Nest; 5] = [
        ("modules", |n| {
            format!("{}{}", "module {\n".repeat(n), "}\n".repeat(n))
        }),
        ("generic regions", |n| {
            // A region holds a block: the innermost is a `module {}`.
            let n = n / 2 - 1;
            format!(
                "{}module {{}}\n{}",
                "\"builtin.module\"() ({\n".repeat(n),
                "}) : () -> ()\n".repeat(n)
            )
        }),
        ("arrays", |n| {
            let n = n - 1;
            format!(
                "module attributes {{t.a = {}{}}} {{}}",
                "[".repeat(n),
                "]".repeat(n)
            )
        }),
        ("dictionaries", |n| {
            let n = n - 1;
            format!(
                "module attributes {{t.a = {}1{}}} {{}}",
                "{b = ".repeat(n),
                "}".repeat(n)
            )
        }),
        ("dense arrays", |n| {
            let n = n - 3;
            let shape = "1x".repeat(n);
            format!(
                "module attributes {{t.a = dense<{}1{}> : tensor<{shape}i32>}} {{}}",
                "[".repeat(n),
                "]".repeat(n)
            )
        }),
    ];
    for (name, nest) in nests {
        let at_limit = nest(MAX);
        let too_deep = nest(20_000);
        let outcome = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || -> Result<(), String> {
                let context = ir::context().map_err(|e| e.to_string())?;
                let module = ir::parse(&context, &at_limit).map_err(|e| e.to_string())?;
                ir::verify(&module).map_err(|e| e.to_string())?;
                let printed = ir::print(&module);
                ir::parse(&context, &printed).map_err(|e| format!("read back: {e}"))?;
                let refused = match ir::parse(&context, &too_deep) {
                    Ok(_) => Err("20,000 levels parsed".into()),
                    Err(e) if e.to_string().contains("nested deeper than") => Ok(()),
                    Err(e) => Err(format!("20,000 levels: {e}")),
                };
                refused
            })
            .unwrap()
            .join()
            .unwrap();
        if let Err(e) = outcome {
            panic!("{name}: {e}");
        }
    }
}
