//! docs/dialect.md documents every op of the dialect, and nothing else.

#[test]
fn dialect_doc_lists_every_op() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/dialect.md");
    let doc = std::fs::read_to_string(path).expect("docs/dialect.md");
    let headings: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("#### `rmir."))
        .filter_map(|l| l.strip_suffix('`'))
        .collect();
    for op in ir::OPS {
        assert!(
            headings.contains(&op.name),
            "docs/dialect.md has no `#### \\`rmir.{}\\`` section",
            op.name
        );
        let example = format!("\"rmir.{}\"(", op.name);
        assert!(doc.contains(&example), "no example of rmir.{}", op.name);
    }
    for h in headings {
        assert!(
            ir::dialect::op_spec(h).is_some(),
            "docs/dialect.md documents rmir.{h}, which the dialect does not define"
        );
    }
}
