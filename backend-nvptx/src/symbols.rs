//! Which device functions a link input defines and which it references,
//! read before nvJitLink runs, so that admission can tell whether an
//! `extern "C"` call has a definition, and a link can report unresolved
//! and multiply defined symbols by name.
//!
//! How each kind of content is read:
//! - PTX text: its top-level `.func`/`.entry` declarations (`.visible` and
//!   `.weak` define, `.extern` references), with their `.param` types;
//! - a cubin: its ELF symbol table (no parameter types);
//! - CUDA source: compiled by NVRTC to PTX (relocatable), then as PTX;
//! - fatbin entries: as PTX or cubin, unpacked first when zstd-compressed
//!   (what nvcc 13 writes by default); LZ4 and obfuscated entries are
//!   reported as unreadable;
//! - LTOIR, which is opaque: through a *probe link*. A kernel that takes
//!   the address of every wanted symbol, compiled by NVRTC to LTOIR, is
//!   linked with the input by nvJitLink to PTX (`-lto -ptx`). Taking an
//!   address keeps a definition out of inlining and dead-code elimination,
//!   so the PTX shows each wanted symbol the input defines as a `.func`
//!   with its parameters, each one it does not as `.extern .func`, and,
//!   as `.extern`, what those definitions reference in turn. Only the
//!   symbols asked about are seen, which is what link-time optimisation
//!   keeps anyway.

use std::collections::{BTreeMap, BTreeSet};

use passes::lower::plan::{DeviceAbi, ParamType};

use crate::container::{Item, ItemKind, Packing};
use crate::link::{LinkInput, LinkOutput, LinkPlan};
use crate::nvrtc::{self, NvrtcOptions, NvrtcTarget};
use crate::{Arch, Isolation};

/// The largest payload unpacked to read symbols (a fatbin entry's header
/// says how large it unpacks; crafted input must not allocate more).
const MAX_UNPACKED: u64 = 1 << 30;

/// `st_other` bit of a kernel's symbol in a cubin.
const STO_CUDA_ENTRY: u8 = 0x10;

/// The symbol name of the probe kernel.
pub const PROBE_KERNEL: &str = "__rmir_symbol_probe";

/// What one link input defines and references.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolTable {
    /// Device functions and kernels it defines, with their `.param` types
    /// where the content says.
    pub defines: BTreeMap<String, Definition>,
    /// Functions its code calls that it does not define itself.
    pub references: BTreeSet<String>,
    /// Parts whose symbols could not be read, each with why.
    pub unreadable: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Definition {
    pub abi: Option<DeviceAbi>,
    /// `.weak` (PTX) or `STB_WEAK` (cubin): several may coexist.
    pub weak: bool,
    pub kernel: bool,
    /// Found only in LTOIR (through the probe): no PTX or cubin part of the
    /// input defines it.
    pub ltoir_only: bool,
}

impl SymbolTable {
    fn define(&mut self, name: &str, def: Definition) {
        use std::collections::btree_map::Entry;
        match self.defines.entry(name.to_string()) {
            Entry::Vacant(v) => {
                v.insert(def);
            }
            Entry::Occupied(mut o) => {
                let entry = o.get_mut();
                // A fatbin may hold the same code as PTX and as cubin: keep
                // the parameter types whichever part gives them.
                entry.abi = entry.abi.take().or(def.abi);
                entry.weak |= def.weak;
                entry.kernel |= def.kernel;
                // LTOIR only while every part that defines it is LTOIR.
                entry.ltoir_only &= def.ltoir_only;
            }
        }
    }

    fn merge(&mut self, other: SymbolTable) {
        for (name, def) in other.defines {
            self.define(&name, def);
        }
        self.references.extend(other.references);
        self.unreadable.extend(other.unreadable);
    }

    fn settle(&mut self) {
        let defined: BTreeSet<String> = self.defines.keys().cloned().collect();
        self.references.retain(|r| !defined.contains(r));
    }
}

/// How the symbols of inputs are read.
#[derive(Clone, Debug)]
pub struct SymbolReader {
    pub arch: Arch,
    /// Where the probe link's nvJitLink runs (see [`crate::isolate`]).
    pub isolation: Isolation,
    /// `-I` folders for CUDA sources.
    pub cuda_include_dirs: Vec<std::path::PathBuf>,
}

impl SymbolReader {
    pub fn new(arch: Arch) -> Self {
        SymbolReader {
            arch,
            isolation: Isolation::InProcess,
            cuda_include_dirs: Vec::new(),
        }
    }

    /// The symbols of `input`; `wanted` are the names asked about, which is
    /// all an LTOIR part can answer for (see the module docs).
    pub fn read(&self, input: &LinkInput, wanted: &[String]) -> Result<SymbolTable, String> {
        let mut table = SymbolTable::default();
        if input.description.kind() == ItemKind::CudaSource {
            let source = std::str::from_utf8(&input.bytes)
                .map_err(|_| format!("`{}` is not UTF-8 text", input.name))?;
            let mut options = NvrtcOptions::new(self.arch, NvrtcTarget::Ptx);
            options
                .include_dirs
                .extend(self.cuda_include_dirs.iter().cloned());
            let ptx = nvrtc::compile(&input.name, source, &options)
                .map_err(|e| format!("compiling `{}`: {e}", input.name))?;
            let text = String::from_utf8_lossy(&ptx.bytes);
            table.merge(parse_ptx(&text));
        } else {
            self.read_item(
                &input.description.root,
                &input.bytes,
                &mut Vec::new(),
                &mut table,
            );
            if input.description.carries_ltoir() && !wanted.is_empty() {
                match self.probe(input, wanted) {
                    Ok(found) => table.merge(found),
                    Err(e) => table.unreadable.push(format!(
                        "`{}`: its LTOIR could not be probed: {e}",
                        input.name
                    )),
                }
            }
        }
        table.settle();
        Ok(table)
    }

    fn read_item<'a>(
        &self,
        item: &'a Item,
        bytes: &[u8],
        trail: &mut Vec<&'a str>,
        table: &mut SymbolTable,
    ) {
        trail.push(&item.name);
        let path = || {
            trail
                .iter()
                .filter(|t| !t.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" › ")
        };
        if matches!(item.kind, ItemKind::Ptx | ItemKind::Cubin) {
            let start = item.offset as usize;
            let end = start.saturating_add(item.size as usize).min(bytes.len());
            let payload = bytes.get(start..end).unwrap_or(&[]);
            match unpack(item.packing, payload) {
                Ok(data) => {
                    if item.kind == ItemKind::Ptx {
                        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                        table.merge(parse_ptx(&String::from_utf8_lossy(&data[..end])));
                    } else {
                        match cubin_symbols(&data) {
                            Ok(t) => table.merge(t),
                            Err(e) => table.unreadable.push(format!("{}: {e}", path())),
                        }
                    }
                }
                Err(why) => table.unreadable.push(format!("{}: {why}", path())),
            }
        }
        for child in &item.children {
            self.read_item(child, bytes, trail, table);
        }
        trail.pop();
    }

    /// The probe link (see the module docs).
    fn probe(&self, input: &LinkInput, wanted: &[String]) -> Result<SymbolTable, String> {
        let source = probe_source(wanted);
        let options = NvrtcOptions::new(self.arch, NvrtcTarget::Ltoir);
        let probe = nvrtc::compile("rmir_symbol_probe.cu", &source, &options)
            .map_err(|e| format!("compiling the probe: {e}"))?;
        let probe = LinkInput::new("rmir_symbol_probe.ltoir", probe.bytes)
            .map_err(|e| format!("the probe: {e}"))?;
        let mut plan = LinkPlan::new(self.arch)
            .with_input(probe)
            .with_input(input.clone());
        plan.output = LinkOutput::Ptx;
        plan.isolation = self.isolation.clone();
        let linked = plan.link().map_err(|e| e.to_string())?;
        // Link-time optimisation internalised what it kept: a wanted symbol
        // with a body is one the input defines; other bodies are its
        // helpers, not symbols it exports.
        let mut table = read_ptx(&String::from_utf8_lossy(&linked.bytes), true);
        let wanted: BTreeSet<&String> = wanted.iter().collect();
        table.defines.retain(|name, _| wanted.contains(name));
        for def in table.defines.values_mut() {
            def.ltoir_only = true;
        }
        // The probe's own references are the wanted symbols the input does
        // not define: not references of the input.
        table.references.retain(|r| !wanted.contains(r));
        Ok(table)
    }
}

/// A kernel taking the address of each wanted symbol.
fn probe_source(wanted: &[String]) -> String {
    let mut s = String::new();
    for w in wanted {
        s.push_str(&format!("extern \"C\" __device__ void {w}();\n"));
    }
    s.push_str(&format!(
        "extern \"C\" __global__ void {PROBE_KERNEL}(void **out) {{\n"
    ));
    for (i, w) in wanted.iter().enumerate() {
        s.push_str(&format!("    out[{i}] = (void *)&{w};\n"));
    }
    s.push_str("}\n");
    s
}

fn unpack(packing: Packing, payload: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    match packing {
        Packing::Plain => Ok(payload.into()),
        Packing::Zstd {
            compressed,
            uncompressed,
        } => {
            if uncompressed > MAX_UNPACKED {
                return Err(format!(
                    "zstd-compressed to unpack to {uncompressed} bytes, more than is read here"
                ));
            }
            let frame = payload
                .get(..compressed as usize)
                .ok_or("the zstd frame is larger than the entry")?;
            let mut out = vec![0; uncompressed as usize];
            let n = ruzstd::decoding::FrameDecoder::new()
                .decode_all(frame, &mut out)
                .map_err(|e| format!("the zstd frame does not unpack: {e}"))?;
            out.truncate(n);
            Ok(out.into())
        }
        Packing::Lz4 => {
            Err("LZ4-compressed (rebuild it with nvcc 13, or with `-no-compress`)".into())
        }
        Packing::Obfuscated => Err("obfuscated".into()),
    }
}

/// The defined and undefined function symbols of a cubin's symbol table.
pub fn cubin_symbols(bytes: &[u8]) -> Result<SymbolTable, String> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let file = object::read::elf::ElfFile64::<object::Endianness>::parse(bytes)
        .map_err(|e| format!("its ELF symbol table cannot be read: {e}"))?;
    let mut table = SymbolTable::default();
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() || sym.is_local() {
            continue;
        }
        if sym.is_undefined() {
            if matches!(sym.kind(), SymbolKind::Text | SymbolKind::Unknown) {
                table.references.insert(name.to_string());
            }
        } else if sym.kind() == SymbolKind::Text {
            // `STO_CUDA_ENTRY` in `st_other` marks a kernel (`.nv.info.NAME`
            // exists for device functions of relocatable code too).
            let kernel = object::read::elf::Sym::st_other(sym.elf_symbol()).0 & STO_CUDA_ENTRY != 0;
            table.define(
                name,
                Definition {
                    abi: None,
                    weak: sym.is_weak(),
                    kernel,
                    ltoir_only: false,
                },
            );
        }
    }
    table.settle();
    Ok(table)
}

/// The top-level function declarations of PTX text: `.visible` and
/// `.weak` definitions, `.extern` references.
pub fn parse_ptx(text: &str) -> SymbolTable {
    read_ptx(text, false)
}

/// [`parse_ptx`]; with `internal`, module-internal definitions count too
/// (what link-time optimisation leaves of the definitions it internalised).
fn read_ptx(text: &str, internal: bool) -> SymbolTable {
    let mut table = SymbolTable::default();
    let text = strip_comments(text);
    let mut depth = 0usize;
    let mut statement = String::new();
    for c in text.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    declaration(&statement, true, internal, &mut table);
                    statement.clear();
                }
                depth += 1;
            }
            '}' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => {
                declaration(&statement, false, internal, &mut table);
                statement.clear();
            }
            c if depth == 0 => statement.push(c),
            _ => {}
        }
    }
    table.settle();
    table
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
                out.push(' ');
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Splits a declaration into tokens: words, and `(`, `)`, `,` alone.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        let punct = matches!(c, '(' | ')' | ',');
        if c.is_whitespace() || punct {
            if let Some(st) = start.take() {
                out.push(&s[st..i]);
            }
            if punct {
                out.push(&s[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

/// One top-level statement: a `.func`/`.entry` declaration or definition
/// (`body`: followed by `{`) is recorded; anything else is ignored.
fn declaration(statement: &str, body: bool, internal: bool, table: &mut SymbolTable) {
    let toks = tokens(statement);
    let Some(at) = toks.iter().position(|t| *t == ".func" || *t == ".entry") else {
        return;
    };
    let kernel = toks[at] == ".entry";
    let linkage = &toks[..at];
    let external = linkage.contains(&".extern");
    let weak = linkage.contains(&".weak");
    let visible = linkage.contains(&".visible") || weak;
    let mut rest = &toks[at + 1..];
    let mut ret = None;
    if rest.first() == Some(&"(") {
        let close = rest.iter().position(|t| *t == ")").unwrap_or(rest.len());
        ret = params(&rest[1..close]).into_iter().next();
        rest = rest.get(close + 1..).unwrap_or(&[]);
    }
    let Some(name) = rest.first().copied() else {
        return;
    };
    let mut list = Vec::new();
    if rest.get(1) == Some(&"(") {
        let close = rest.iter().position(|t| *t == ")").unwrap_or(rest.len());
        list = params(&rest[2..close]);
    }
    if external && !body {
        table.references.insert(name.to_string());
        return;
    }
    if !body || !(visible || internal) {
        // A forward declaration, or a function of this module alone.
        return;
    }
    table.define(
        name,
        Definition {
            abi: Some(DeviceAbi { params: list, ret }),
            weak,
            kernel,
            ltoir_only: false,
        },
    );
}

/// `.param .b32 a , .param .align 8 .b8 b[16]` → the parameters' types.
fn params(toks: &[&str]) -> Vec<ParamType> {
    toks.split(|t| *t == ",")
        .filter(|p| p.contains(&".param"))
        .map(|p| {
            let scalar = p.iter().filter_map(|t| scalar_bytes(t)).next().unwrap_or(0);
            let count = p
                .last()
                .and_then(|n| n.split_once('['))
                .and_then(|(_, c)| c.trim_end_matches(']').parse::<u32>().ok());
            match count {
                Some(n) => ParamType::Aggregate { bytes: scalar * n },
                None => ParamType::Scalar { bytes: scalar },
            }
        })
        .collect()
}

/// `.b32` → 4, `.f64` → 8, `.pred` → 1.
fn scalar_bytes(t: &str) -> Option<u32> {
    if t == ".pred" {
        return Some(1);
    }
    let t = t.strip_prefix('.')?;
    let (kind, bits) = t.split_at(1);
    if !matches!(kind, "b" | "u" | "s" | "f") {
        return None;
    }
    bits.parse::<u32>().ok().map(|b| b / 8)
}

/// Symbols the toolkit resolves at link time or earlier: `printf`'s
/// `vprintf`, the device heap, `assert`, libdevice (`__nv_*`, linked by
/// NVVM itself) and the device runtime (`cuda*`, `__cuda*`).
pub fn is_toolkit_symbol(name: &str) -> bool {
    matches!(name, "vprintf" | "malloc" | "free" | "__assertfail")
        || ["__nv_", "__nvvm_", "__cuda", "cuda", "__internal"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// What a set of inputs leaves unresolved or defines more than once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolProblems {
    /// Symbol → the inputs that reference it; nothing given defines it.
    pub unresolved: BTreeMap<String, Vec<String>>,
    /// Symbol → the inputs that define it (two or more, none weak).
    pub multiple: BTreeMap<String, Vec<String>>,
}

impl SymbolProblems {
    pub fn is_empty(&self) -> bool {
        self.unresolved.is_empty() && self.multiple.is_empty()
    }
}

impl std::fmt::Display for SymbolProblems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |v: &[String]| {
            v.iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut first = true;
        for (sym, by) in &self.unresolved {
            if !first {
                writeln!(f)?;
            }
            first = false;
            write!(
                f,
                "undefined device symbol `{sym}`, referenced by {}: no input defines it",
                list(by)
            )?;
        }
        for (sym, by) in &self.multiple {
            if !first {
                writeln!(f)?;
            }
            first = false;
            write!(
                f,
                "device symbol `{sym}` is defined by more than one input: {}",
                list(by)
            )?;
        }
        Ok(())
    }
}

/// Checks named symbol tables together: every reference defined by some
/// input (or by the toolkit), no symbol defined by two inputs. Unresolved
/// names are not reported while any input has parts that could not be read
/// (one of them may define it: nvJitLink then decides).
pub fn check(tables: &[(String, SymbolTable)]) -> SymbolProblems {
    let mut problems = SymbolProblems::default();
    let mut defined: BTreeMap<&str, Vec<(&str, bool)>> = BTreeMap::new();
    for (input, t) in tables {
        for (name, def) in &t.defines {
            defined.entry(name).or_default().push((input, def.weak));
        }
    }
    for (name, by) in &defined {
        if by.len() > 1 && by.iter().all(|(_, weak)| !weak) {
            problems.multiple.insert(
                name.to_string(),
                by.iter().map(|(i, _)| i.to_string()).collect(),
            );
        }
    }
    if tables.iter().all(|(_, t)| t.unreadable.is_empty()) {
        for (input, t) in tables {
            for r in &t.references {
                if !defined.contains_key(r.as_str()) && !is_toolkit_symbol(r) {
                    problems
                        .unresolved
                        .entry(r.clone())
                        .or_default()
                        .push(input.clone());
                }
            }
        }
    }
    problems
}
