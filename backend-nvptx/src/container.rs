//! What a device-code file is and what it holds.
//!
//! [`describe`] classifies the bytes of one input — PTX text, bare LTOIR, an
//! NVIDIA cubin, a fatbin, a host object with a `.nv_fatbin` or
//! `__nv_relfatbin` section, a static library, or CUDA source (`.cu`, by
//! name) — and returns a tree of what it contains.
//!
//! NVIDIA documents none of the binary layouts. What is read here was read
//! from CUDA 13.0 output (nvcc, fatbinary, NVRTC, libNVVM) and every size is
//! checked before use; anything that does not match what was observed is an
//! error naming where in the file it was found, never a guess. Compressed
//! fatbin payloads are reported as such, not unpacked.

use std::fmt::{self, Write as _};

use serde::Serialize;

/// The u32 (little-endian) that starts a bare LTOIR module.
pub const LTOIR_MAGIC: u32 = 0x7F4E_43ED;
/// The u32 (little-endian) that starts a fatbin container.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// ELF `e_machine` of NVIDIA device code.
pub const EM_CUDA: u16 = 190;
const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;
/// Section holding a host object's fatbin (whole-program compilation).
pub const NV_FATBIN_SECTION: &str = ".nv_fatbin";
/// Section holding a host object's relocatable fatbin (`-dc`, `-dlto`).
pub const NV_RELFATBIN_SECTION: &str = "__nv_relfatbin";

/// Bytes of the LTOIR header read here: the magic, and the target at 26..28.
const LTOIR_HEADER_LEN: usize = 28;
/// Bytes of a fatbin entry header read here (up to the uncompressed size).
const FATBIN_ENTRY_HEADER_LEN: usize = 64;
/// Archives inside archives are legal but never useful here; bound the
/// recursion so crafted input cannot exhaust the stack.
const MAX_NESTING: usize = 8;

/// What an [`Item`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ItemKind {
    /// CUDA C++ source (recognised by the `.cu` file name).
    CudaSource,
    /// PTX assembly text.
    Ptx,
    /// NVVM LTO intermediate representation.
    Ltoir,
    /// An NVIDIA device ELF (cubin).
    Cubin,
    /// A fatbin: containers of PTX, cubin and LTOIR entries.
    Fatbin,
    /// A host ELF object carrying device code in a fatbin section.
    HostObject,
    /// A static library (`ar` archive) of host objects.
    Library,
}

impl ItemKind {
    /// Short name used in text output.
    pub fn label(self) -> &'static str {
        match self {
            ItemKind::CudaSource => "CUDA source",
            ItemKind::Ptx => "PTX",
            ItemKind::Ltoir => "LTOIR",
            ItemKind::Cubin => "cubin",
            ItemKind::Fatbin => "fatbin",
            ItemKind::HostObject => "host object",
            ItemKind::Library => "static library",
        }
    }
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One thing found in an input, with what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    pub kind: ItemKind,
    /// File name, archive member name, section name, or `entry N` for a
    /// fatbin entry.
    pub name: String,
    /// Offset of the item's bytes in the top-level input.
    pub offset: u64,
    /// Size of the item's bytes.
    pub size: u64,
    /// `sm_90` (cubin), `compute_90` (PTX) or `lto_90` (LTOIR), when readable.
    pub arch: Option<String>,
    /// Facts read from the bytes, e.g. `PTX ISA 9.0`, `compressed (zstd)`.
    pub facts: Vec<String>,
    pub children: Vec<Item>,
    /// How a fatbin entry's payload is stored (what reading its symbols
    /// must undo first); `Plain` for everything else.
    #[serde(skip)]
    pub packing: Packing,
}

/// How a fatbin entry's payload is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Packing {
    #[default]
    Plain,
    /// zstd: the frame's `compressed` bytes unpack to `uncompressed`.
    Zstd {
        compressed: u64,
        uncompressed: u64,
    },
    Lz4,
    Obfuscated,
}

impl Item {
    fn new(kind: ItemKind, name: impl Into<String>, offset: u64, size: u64) -> Self {
        Item {
            kind,
            name: name.into(),
            offset,
            size,
            arch: None,
            facts: Vec::new(),
            children: Vec::new(),
            packing: Packing::Plain,
        }
    }

    /// Whether this item is LTOIR or holds LTOIR anywhere below it.
    pub fn carries_ltoir(&self) -> bool {
        self.kind == ItemKind::Ltoir || self.children.iter().any(Item::carries_ltoir)
    }

    /// Whether this item is, or holds, code that is not LTOIR (PTX or cubin).
    pub fn carries_non_ltoir_code(&self) -> bool {
        matches!(self.kind, ItemKind::Ptx | ItemKind::Cubin)
            || self.children.iter().any(Item::carries_non_ltoir_code)
    }

    /// Paths (`lib.a(member.o) › __nv_relfatbin › entry 2`) of every LTOIR
    /// item at or below this one.
    pub fn ltoir_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out, &|item| {
            item.kind == ItemKind::Ltoir
        });
        out
    }

    fn collect_paths<'a>(
        &'a self,
        trail: &mut Vec<&'a str>,
        out: &mut Vec<String>,
        pick: &dyn Fn(&Item) -> bool,
    ) {
        trail.push(&self.name);
        if pick(self) {
            out.push(trail.join(" › "));
        }
        for child in &self.children {
            child.collect_paths(trail, out, pick);
        }
        trail.pop();
    }
}

/// The classified content of one input file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Description {
    pub root: Item,
}

impl Description {
    pub fn kind(&self) -> ItemKind {
        self.root.kind
    }

    /// Whether any part of the input is LTOIR.
    pub fn carries_ltoir(&self) -> bool {
        self.root.carries_ltoir()
    }

    /// Where the LTOIR in this input sits.
    pub fn ltoir_paths(&self) -> Vec<String> {
        self.root.ltoir_paths()
    }

    /// A listing in the spirit of `cuobjdump -lelf -lptx`, one item a line,
    /// nested items indented, LTOIR listed too.
    pub fn render(&self) -> String {
        let mut out = String::new();
        render_item(&self.root, 0, &mut out);
        out
    }
}

impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

fn render_item(item: &Item, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    let _ = write!(out, "{indent}{}: {}", item.name, item.kind);
    if let Some(arch) = &item.arch {
        let _ = write!(out, ", {arch}");
    }
    let _ = write!(out, ", {} bytes", item.size);
    for fact in &item.facts {
        let _ = write!(out, ", {fact}");
    }
    if matches!(
        item.kind,
        ItemKind::Fatbin | ItemKind::HostObject | ItemKind::Library
    ) && item.carries_ltoir()
    {
        out.push_str(", carries LTOIR");
    }
    out.push('\n');
    for child in &item.children {
        render_item(child, depth + 1, out);
    }
}

/// Why bytes could not be classified. `location` names where in the input
/// (`lib.a(k.o) › __nv_relfatbin › entry 2`) and `offset` the byte offset in
/// the top-level input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: at byte {offset}: {message}")]
pub struct ContainerError {
    pub location: String,
    pub offset: u64,
    pub message: String,
}

/// Classifies `bytes`, named `name` (a file name: `.cu` marks CUDA source).
pub fn describe(name: &str, bytes: &[u8]) -> Result<Description, ContainerError> {
    let place = Place {
        location: name.to_string(),
        base: 0,
        depth: 0,
    };
    let root = if name.ends_with(".cu") {
        describe_cuda_source(&place, name, bytes)?
    } else {
        describe_bytes(&place, name, bytes)?
    };
    Ok(Description { root })
}

/// Where the bytes being read sit: a printable path and their offset in the
/// top-level input.
struct Place {
    location: String,
    base: u64,
    depth: usize,
}

impl Place {
    fn error(&self, offset: usize, message: impl Into<String>) -> ContainerError {
        ContainerError {
            location: self.location.clone(),
            offset: self.base + offset as u64,
            message: message.into(),
        }
    }

    fn inner(&self, step: &str, offset: usize) -> Place {
        Place {
            location: format!("{} › {step}", self.location),
            base: self.base + offset as u64,
            depth: self.depth + 1,
        }
    }

    fn member(&self, member: &str, offset: usize) -> Place {
        Place {
            location: format!("{}({member})", self.location),
            base: self.base + offset as u64,
            depth: self.depth + 1,
        }
    }
}

fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

/// `bytes[start..start+len]`, or `None` when it does not fit.
fn slice(bytes: &[u8], start: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    let len = usize::try_from(len).ok()?;
    bytes.get(start..start.checked_add(len)?)
}

fn describe_cuda_source(place: &Place, name: &str, bytes: &[u8]) -> Result<Item, ContainerError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| place.error(e.valid_up_to(), "CUDA source (.cu) is not UTF-8 text"))?;
    if let Some(nul) = text.find('\0') {
        return Err(place.error(nul, "CUDA source (.cu) contains a NUL byte"));
    }
    let mut item = Item::new(ItemKind::CudaSource, name, 0, bytes.len() as u64);
    item.facts.push(format!("{} lines", text.lines().count()));
    Ok(item)
}

/// Classifies by content: magic numbers first, then PTX text.
fn describe_bytes(place: &Place, name: &str, bytes: &[u8]) -> Result<Item, ContainerError> {
    if place.depth > MAX_NESTING {
        return Err(place.error(0, format!("nested more than {MAX_NESTING} levels deep")));
    }
    let size = bytes.len() as u64;
    if bytes.starts_with(b"!<arch>\n") {
        return describe_library(place, name, bytes);
    }
    if bytes.starts_with(b"!<thin>\n") {
        return Err(place.error(
            0,
            "thin archives (members kept outside the file) are not supported",
        ));
    }
    if bytes.starts_with(b"\x7fELF") {
        return describe_elf(place, name, bytes);
    }
    match read_u32(bytes, 0) {
        Some(LTOIR_MAGIC) => return describe_ltoir(place, name, bytes),
        Some(FATBIN_MAGIC) => {
            let mut item = Item::new(ItemKind::Fatbin, name, place.base, size);
            describe_fatbin(place, bytes, &mut item)?;
            return Ok(item);
        }
        _ => {}
    }
    if let Some(item) = describe_ptx(name, place.base, bytes) {
        return Ok(item);
    }
    let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Err(place.error(
        0,
        format!(
            "unknown content (first bytes: {}); expected PTX text, LTOIR, a cubin, a fatbin, \
             a host object, a static library, or CUDA source named *.cu",
            if head.is_empty() {
                "none, the input is empty".to_string()
            } else {
                head.join(" ")
            }
        ),
    ))
}

fn describe_ltoir(place: &Place, name: &str, bytes: &[u8]) -> Result<Item, ContainerError> {
    if bytes.len() < LTOIR_HEADER_LEN {
        return Err(place.error(
            0,
            format!(
                "truncated LTOIR: {} bytes, its header alone takes {LTOIR_HEADER_LEN}",
                bytes.len()
            ),
        ));
    }
    // The header as CUDA 13 writes it (NVRTC, libNVVM, nvcc): a version
    // byte of 1 at 4, then two u32 offsets into the module at 16 and 20 (40
    // and 44 in every LTOIR seen). nvJitLink follows the first unchecked
    // (0xffffffff there killed it with SIGSEGV), so both must lie inside
    // the module and in order. The rest (NVVM bitcode) is opaque: a bit
    // flipped there can still crash nvJitLink, which is why `driver link`
    // runs it in a child process (see `isolate`).
    if bytes[4] != 1 {
        return Err(place.error(
            4,
            format!("unknown LTOIR header version {} (known: 1)", bytes[4]),
        ));
    }
    let first = read_u32(bytes, 16).unwrap_or(0) as usize;
    let second = read_u32(bytes, 20).unwrap_or(0) as usize;
    if first < LTOIR_HEADER_LEN || first > second || second > bytes.len() {
        return Err(place.error(
            16,
            format!(
                "LTOIR header offsets {first} and {second} do not lie in order inside the \
                 {}-byte module",
                bytes.len()
            ),
        ));
    }
    let mut item = Item::new(ItemKind::Ltoir, name, place.base, bytes.len() as u64);
    // CUDA 13 writes the target as 10 × compute capability (900 for
    // compute_90) at offset 26; anything else is left unread.
    item.arch = read_u16(bytes, 26)
        .filter(|v| *v >= 100 && v % 10 == 0)
        .map(|v| format!("lto_{}", v / 10));
    Ok(item)
}

/// PTX text: optional blank lines and comments, then `.version X.Y`.
/// Returns `None` when the bytes are not PTX.
fn describe_ptx(name: &str, base: u64, bytes: &[u8]) -> Option<Item> {
    // Fatbin payloads pad PTX with NULs; the text ends at the first one.
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    if bytes[end..].iter().any(|&b| b != 0) {
        return None;
    }
    let text = std::str::from_utf8(&bytes[..end]).ok()?;
    let rest = skip_ptx_trivia(text)?;
    let version = rest.strip_prefix(".version")?;
    if !version.starts_with([' ', '\t']) {
        return None;
    }
    let version = version.split_whitespace().next()?;
    let (major, minor) = version.split_once('.')?;
    if major.is_empty()
        || minor.is_empty()
        || !major
            .bytes()
            .chain(minor.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut item = Item::new(ItemKind::Ptx, name, base, bytes.len() as u64);
    item.facts.push(format!("PTX ISA {major}.{minor}"));
    let mut entries = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(target) = line.strip_prefix(".target") {
            let mut parts = target.split(',').map(str::trim);
            if let Some(sm) = parts.next().and_then(|t| t.strip_prefix("sm_")) {
                item.arch = Some(format!("compute_{sm}"));
            }
            if parts.any(|p| p == "debug") {
                item.facts.push("debug".to_string());
            }
        }
        if let Some(pos) = line.find(".entry ") {
            let after = line[pos + ".entry ".len()..].trim_start();
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
                .collect();
            if !name.is_empty() {
                entries.push(name);
            }
        }
    }
    if !entries.is_empty() {
        item.facts.push(format!("kernels: {}", entries.join(" ")));
    }
    Some(item)
}

/// Skips whitespace, `//` and `/* */` comments; `None` on an unclosed comment.
fn skip_ptx_trivia(mut text: &str) -> Option<&str> {
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix("//") {
            text = rest.find('\n').map_or("", |i| &rest[i..]);
        } else if let Some(rest) = text.strip_prefix("/*") {
            text = &rest[rest.find("*/")? + 2..];
        } else {
            return Some(text);
        }
    }
}

/// Walks the containers of a fatbin and adds one child per entry.
fn describe_fatbin(place: &Place, bytes: &[u8], item: &mut Item) -> Result<(), ContainerError> {
    let mut offset = 0usize;
    let mut containers = 0usize;
    let mut entries = Vec::new();
    while offset < bytes.len() {
        // Sections may pad the last container with zeros.
        if bytes[offset..].iter().all(|&b| b == 0) {
            break;
        }
        match read_u32(bytes, offset) {
            Some(FATBIN_MAGIC) => {}
            Some(other) => {
                return Err(place.error(
                    offset,
                    format!(
                    "expected a fatbin container (magic 0x{FATBIN_MAGIC:08x}), found 0x{other:08x}"
                ),
                ))
            }
            None => return Err(place.error(offset, "truncated fatbin container header")),
        }
        containers += 1;
        let (Some(version), Some(header_size), Some(body_size)) = (
            read_u16(bytes, offset + 4),
            read_u16(bytes, offset + 6),
            read_u64(bytes, offset + 8),
        ) else {
            return Err(place.error(offset, "truncated fatbin container header (needs 16 bytes)"));
        };
        if version != 1 {
            return Err(place.error(
                offset,
                format!("unknown fatbin container version {version} (known: 1)"),
            ));
        }
        let header_size = header_size as usize;
        if header_size < 16 {
            return Err(place.error(
                offset,
                format!("fatbin container header size {header_size} is below 16"),
            ));
        }
        let body_start = offset + header_size;
        let body = slice(bytes, body_start as u64, body_size).ok_or_else(|| {
            place.error(
                offset,
                format!(
                    "fatbin container claims a {header_size}-byte header and a {body_size}-byte body, \
                     but only {} bytes remain",
                    bytes.len() - offset
                ),
            )
        })?;
        describe_fatbin_entries(place, body, body_start, containers, &mut entries)?;
        offset = body_start + body.len();
    }
    if containers == 0 {
        return Err(place.error(0, "empty fatbin"));
    }
    item.facts.push(format!(
        "{containers} container{}, {} entr{}",
        if containers == 1 { "" } else { "s" },
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" }
    ));
    item.children = entries;
    Ok(())
}

fn describe_fatbin_entries(
    place: &Place,
    body: &[u8],
    body_start: usize,
    container: usize,
    entries: &mut Vec<Item>,
) -> Result<(), ContainerError> {
    let mut at = 0usize;
    while at < body.len() {
        if body[at..].iter().all(|&b| b == 0) {
            break;
        }
        let entry_at = body_start + at;
        let number = entries.len() + 1;
        let label = if container == 1 {
            format!("entry {number}")
        } else {
            format!("container {container} entry {number}")
        };
        let here = place.inner(&label, entry_at);
        let header_fields = (
            read_u16(body, at),
            read_u32(body, at + 4),
            read_u64(body, at + 8),
        );
        let (Some(kind), Some(header_size), Some(payload_size)) = header_fields else {
            return Err(here.error(0, "truncated fatbin entry header"));
        };
        let header_size = header_size as usize;
        if header_size < FATBIN_ENTRY_HEADER_LEN {
            return Err(here.error(
                0,
                format!(
                    "fatbin entry header size {header_size} is below {FATBIN_ENTRY_HEADER_LEN}"
                ),
            ));
        }
        let header = body
            .get(at..at.saturating_add(header_size))
            .filter(|h| h.len() == header_size)
            .ok_or_else(|| {
                here.error(
                    0,
                    format!("fatbin entry header of {header_size} bytes runs past the container"),
                )
            })?;
        let payload_start = at + header_size;
        let payload = slice(body, payload_start as u64, payload_size).ok_or_else(|| {
            here.error(
                0,
                format!(
                    "fatbin entry claims a {payload_size}-byte payload but only {} bytes remain in the container",
                    body.len() - payload_start
                ),
            )
        })?;
        let payload_offset = here.base + header_size as u64;
        let mut entry = describe_fatbin_entry(&here, kind, header, payload, payload_offset)?;
        entry.name = label;
        entries.push(entry);
        at = payload_start + payload.len();
    }
    Ok(())
}

/// Fatbin entry flag bits, as observed in CUDA 13 output.
const FLAG_64BIT: u64 = 0x1;
const FLAG_DEBUG: u64 = 0x2;
const FLAG_LINUX: u64 = 0x10;
const FLAG_COMPRESSED_LZ4: u64 = 0x2000;
const FLAG_COMPRESSED_ZSTD: u64 = 0x8000;
const FLAG_OBFUSCATED: u64 = 0x10000;
/// The first bytes of a zstd frame (RFC 8878).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

fn describe_fatbin_entry(
    here: &Place,
    kind: u16,
    header: &[u8],
    payload: &[u8],
    payload_offset: u64,
) -> Result<Item, ContainerError> {
    // Fixed fields; `header` is at least FATBIN_ENTRY_HEADER_LEN bytes.
    let field32 = |at| read_u32(header, at).unwrap_or(0);
    let compressed_size = field32(16);
    let options_at = field32(20) as usize;
    let minor = read_u16(header, 24).unwrap_or(0);
    let major = read_u16(header, 26).unwrap_or(0);
    let arch = field32(28);
    let name_at = field32(32);
    let name_len = field32(36);
    let flags = read_u64(header, 40).unwrap_or(0);
    let uncompressed_size = read_u64(header, 56).unwrap_or(0);

    let item_kind = match kind {
        1 => ItemKind::Ptx,
        2 => ItemKind::Cubin,
        8 => ItemKind::Ltoir,
        other => {
            return Err(here.error(
                0,
                format!("unknown fatbin entry kind {other} (known: 1 PTX, 2 ELF, 8 LTOIR)"),
            ))
        }
    };
    let mut item = Item::new(item_kind, "", payload_offset, payload.len() as u64);
    if arch != 0 {
        item.arch = Some(match item_kind {
            ItemKind::Ptx => format!("compute_{arch}"),
            ItemKind::Ltoir => format!("lto_{arch}"),
            _ => format!("sm_{arch}"),
        });
    }
    if item_kind == ItemKind::Ptx {
        item.facts.push(format!("PTX ISA {major}.{minor}"));
    }
    if name_len != 0 {
        let name = slice(header, name_at as u64, name_len as u64)
            .ok_or_else(|| here.error(0, "fatbin entry source name lies outside its header"))?;
        item.facts.push(format!(
            "from {}",
            String::from_utf8_lossy(name).trim_end_matches('\0')
        ));
    }
    if options_at != 0 {
        let (Some(at), Some(len)) = (
            read_u32(header, options_at),
            read_u32(header, options_at + 4),
        ) else {
            return Err(here.error(0, "fatbin entry options field lies outside its header"));
        };
        let options = slice(header, at as u64, len as u64)
            .ok_or_else(|| here.error(0, "fatbin entry options lie outside its header"))?;
        let options = String::from_utf8_lossy(options);
        let options = options.trim_matches(|c: char| c == '\0' || c.is_whitespace());
        if !options.is_empty() {
            item.facts.push(format!("options `{options}`"));
        }
    }

    let compressed = flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD) != 0;
    if flags & FLAG_DEBUG != 0 {
        item.facts.push("debug".to_string());
    }
    if compressed {
        let how = if flags & FLAG_COMPRESSED_ZSTD != 0 {
            "zstd"
        } else {
            "LZ4"
        };
        if compressed_size as u64 > payload.len() as u64 {
            return Err(here.error(
                0,
                format!(
                    "compressed size {compressed_size} exceeds the {}-byte payload",
                    payload.len()
                ),
            ));
        }
        // The payload is not unpacked here, so only its frame is checked:
        // a plain (not obfuscated) zstd payload starts with zstd's magic,
        // and a compressed entry has something to unpack.
        if flags & FLAG_COMPRESSED_ZSTD != 0
            && flags & FLAG_OBFUSCATED == 0
            && !payload.starts_with(&ZSTD_MAGIC)
        {
            return Err(here.error(
                0,
                "fatbin entry flagged zstd-compressed does not hold a zstd frame",
            ));
        }
        if compressed_size == 0 || uncompressed_size == 0 {
            return Err(here.error(
                0,
                format!(
                    "compressed fatbin entry with sizes {compressed_size} (compressed) and \
                     {uncompressed_size} (uncompressed)"
                ),
            ));
        }
        item.facts.push(format!(
            "compressed ({how}) {compressed_size} bytes, {uncompressed_size} uncompressed"
        ));
        item.packing = if flags & FLAG_COMPRESSED_ZSTD != 0 {
            Packing::Zstd {
                compressed: compressed_size as u64,
                uncompressed: uncompressed_size,
            }
        } else {
            Packing::Lz4
        };
    }
    if flags & FLAG_OBFUSCATED != 0 {
        item.facts.push("obfuscated".to_string());
        item.packing = Packing::Obfuscated;
    }
    let known = FLAG_64BIT
        | FLAG_DEBUG
        | FLAG_LINUX
        | FLAG_COMPRESSED_LZ4
        | FLAG_COMPRESSED_ZSTD
        | FLAG_OBFUSCATED;
    if flags & !known != 0 {
        item.facts.push(format!("flags 0x{flags:x}"));
    }

    // A plain payload can be checked against what the header claims.
    if !compressed && flags & FLAG_OBFUSCATED == 0 {
        let inner = here.inner("payload", 0);
        let inner = Place {
            base: payload_offset,
            ..inner
        };
        match item_kind {
            ItemKind::Cubin => {
                let cubin = describe_elf(&inner, "", payload)?;
                if cubin.kind != ItemKind::Cubin {
                    return Err(inner.error(0, "fatbin ELF entry does not hold an NVIDIA cubin"));
                }
                item.arch = cubin.arch.or(item.arch);
                item.facts.extend(cubin.facts);
            }
            ItemKind::Ptx => {
                let ptx = describe_ptx("", payload_offset, payload)
                    .ok_or_else(|| inner.error(0, "fatbin PTX entry does not hold PTX text"))?;
                item.facts
                    .extend(ptx.facts.into_iter().filter(|f| !f.starts_with("PTX ISA")));
            }
            ItemKind::Ltoir => {
                if read_u32(payload, 0) != Some(LTOIR_MAGIC) {
                    return Err(
                        inner.error(0, "fatbin LTOIR entry does not start with the LTOIR magic")
                    );
                }
                describe_ltoir(&inner, "", payload)?;
            }
            _ => {}
        }
    }
    Ok(item)
}

/// A section header's fields that matter here.
struct Section<'a> {
    name: String,
    offset: u64,
    size: u64,
    nobits: bool,
    bytes: Option<&'a [u8]>,
}

/// What [`elf_sections`] reads: the header fields used here and the
/// sections.
struct Elf<'a> {
    e_type: u16,
    machine: u16,
    flags: u32,
    sections: Vec<Section<'a>>,
}

// Section types (ELF gABI) and NVIDIA's, as observed in CUDA 13 cubins.
const SHT_NULL: u32 = 0;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_RELA: u32 = 4;
const SHT_NOBITS: u32 = 8;
const SHT_REL: u32 = 9;
const SHT_DYNSYM: u32 = 11;
/// `.nv.callgraph` (SHT_LOPROC + 1) and `.nv.prototype` (+ 2): tables of
/// 8-byte entries.
const SHT_NV_CALLGRAPH: u32 = 0x7000_0001;
const SHT_NV_PROTOTYPE: u32 = 0x7000_0002;
/// `.nv.global` (SHT_LOPROC + 7) and `.nv.shared.*` (+ 0xa) occupy no file
/// bytes in relocatable cubins: their offset is where the next section
/// starts and their size is memory.
const SHT_NV_GLOBAL: u32 = 0x7000_0007;
const SHT_NV_SHARED: u32 = 0x7000_000a;

/// The entry size a table section must declare. nvJitLink divides by it
/// (a zero `sh_entsize` on `.symtab` killed it with SIGFPE).
fn required_entsize(sh_type: u32) -> Option<u64> {
    match sh_type {
        SHT_SYMTAB | SHT_DYNSYM | SHT_RELA => Some(24),
        SHT_REL => Some(16),
        SHT_NV_CALLGRAPH | SHT_NV_PROTOTYPE => Some(8),
        _ => None,
    }
}

/// Reads an ELF64 little-endian file's header and sections with the
/// `object` crate (which checks the header, the section table's place and
/// entry size, and every section's bounds).
fn elf_sections<'a>(place: &Place, bytes: &'a [u8]) -> Result<Elf<'a>, ContainerError> {
    use object::read::elf::{FileHeader, SectionHeader};
    if bytes.len() < 64 {
        return Err(place.error(
            0,
            format!("truncated ELF header: {} bytes of 64", bytes.len()),
        ));
    }
    match (bytes[4], bytes[5]) {
        (2, 1) => {}
        (1, _) => return Err(place.error(4, "32-bit ELF files are not supported")),
        _ => return Err(place.error(4, "only little-endian ELF64 files are supported")),
    }
    let header = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes)
        .map_err(|e| place.error(0, format!("bad ELF header: {e}")))?;
    let endian = object::LittleEndian;
    let table = header
        .sections(endian, bytes)
        .map_err(|e| place.error(40, format!("bad ELF section table: {e}")))?;
    let machine = header.e_machine.get(endian).0;
    let nv_nobits = |t| machine == EM_CUDA && matches!(t, SHT_NV_GLOBAL | SHT_NV_SHARED);
    let mut sections = Vec::new();
    for (index, section) in table.iter().enumerate() {
        let sh_type = section.sh_type(endian).0;
        let offset = section.sh_offset(endian);
        let size = section.sh_size(endian);
        let at = header.e_shoff.get(endian) as usize + index * 64;
        let nobits = matches!(sh_type, SHT_NULL | SHT_NOBITS) || nv_nobits(sh_type);
        let data = if nobits {
            None
        } else {
            Some(section.data(endian, bytes).map_err(|_| {
                place.error(
                    at,
                    format!("ELF section {index} ({size} bytes at {offset}) runs past the end of the file"),
                )
            })?)
        };
        let name = table
            .section_name(endian, section)
            .map_err(|e| place.error(at, format!("ELF section {index}: bad name: {e}")))?;
        sections.push(Section {
            name: String::from_utf8_lossy(name).into_owned(),
            offset,
            size,
            nobits,
            bytes: data,
        });
    }
    Ok(Elf {
        e_type: header.e_type.get(endian).0,
        machine,
        flags: header.e_flags.get(endian).0,
        sections,
    })
}

/// Checks what nvJitLink reads of a cubin without checking it itself
/// (each rule below answers an input that crashed nvJitLink 13.0, or a
/// neighbour of one): the file is exactly its header, sections and tables
/// (bytes appended: SIGSEGV), it has a section table (`e_shoff = 0`:
/// SIGSEGV), table sections declare their entry size and hold whole
/// entries (`sh_entsize = 0`: SIGFPE), links between sections name
/// sections of the right type, and symbols and relocations index within
/// their tables.
fn validate_cubin(place: &Place, bytes: &[u8]) -> Result<(), ContainerError> {
    use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
    let endian = object::LittleEndian;
    let header = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes)
        .map_err(|e| place.error(0, format!("bad ELF header: {e}")))?;
    let shoff = header.e_shoff.get(endian);
    if shoff == 0 {
        return Err(place.error(40, "cubin without a section table (e_shoff = 0)"));
    }
    let table = header
        .sections(endian, bytes)
        .map_err(|e| place.error(40, format!("bad ELF section table: {e}")))?;
    let count = table.len() as u64;
    let mut end = shoff + count * 64;
    let phdrs = header
        .program_headers(endian, bytes)
        .map_err(|e| place.error(32, format!("bad ELF program headers: {e}")))?;
    if !phdrs.is_empty() {
        end = end.max(header.e_phoff.get(endian) + phdrs.len() as u64 * 56);
    }
    for (index, ph) in phdrs.iter().enumerate() {
        if ph.data(endian, bytes).is_err() {
            return Err(place.error(
                header.e_phoff.get(endian) as usize + index * 56,
                format!("ELF program header {index} points outside the file"),
            ));
        }
        if ph.p_filesz(endian) > 0 {
            end = end.max(ph.p_offset(endian).saturating_add(ph.p_filesz(endian)));
        }
    }
    let section_at = |index: usize| shoff as usize + index * 64;
    let type_of = |index: u32| {
        table
            .section(object::SectionIndex(index as usize))
            .ok()
            .map(|s| s.sh_type(endian).0)
    };
    let mut symbol_counts = vec![None; table.len()];
    for (index, section) in table.iter().enumerate() {
        let at = section_at(index);
        let sh_type = section.sh_type(endian).0;
        let size = section.sh_size(endian);
        let entsize = section.sh_entsize(endian);
        let nobits = matches!(
            sh_type,
            SHT_NULL | SHT_NOBITS | SHT_NV_GLOBAL | SHT_NV_SHARED
        );
        if !nobits {
            end = end.max(section.sh_offset(endian).saturating_add(size));
        }
        if let Some(required) = required_entsize(sh_type) {
            if entsize != required {
                return Err(place.error(
                    at + 56,
                    format!("ELF section {index} (type 0x{sh_type:x}) has entry size {entsize}, expected {required}"),
                ));
            }
        }
        if entsize != 0 && size % entsize != 0 {
            return Err(place.error(
                at + 32,
                format!("ELF section {index}: size {size} is not a multiple of its entry size {entsize}"),
            ));
        }
        let link = section.sh_link(endian);
        let info = section.sh_info(endian);
        match sh_type {
            SHT_SYMTAB | SHT_DYNSYM => {
                if type_of(link) != Some(SHT_STRTAB) {
                    return Err(place.error(
                        at + 40,
                        format!("ELF symbol table {index} links section {link}, which is not a string table"),
                    ));
                }
                symbol_counts[index] = Some(size / 24);
            }
            SHT_REL | SHT_RELA => {
                if !matches!(type_of(link), Some(SHT_SYMTAB | SHT_DYNSYM)) {
                    return Err(place.error(
                        at + 40,
                        format!("ELF relocation section {index} links section {link}, which is not a symbol table"),
                    ));
                }
                if info as u64 >= count {
                    return Err(place.error(
                        at + 44,
                        format!("ELF relocation section {index} applies to section {info}, which does not exist"),
                    ));
                }
            }
            _ => {}
        }
    }
    if end != bytes.len() as u64 {
        return Err(place.error(
            end.min(bytes.len() as u64) as usize,
            format!(
                "the cubin's header, sections and tables end at byte {end}, but the file has {} bytes",
                bytes.len()
            ),
        ));
    }
    // Symbols: names inside the string table, sections that exist.
    for (index, section) in table.iter().enumerate() {
        let Some(symbols) = symbol_counts[index] else {
            continue;
        };
        let data = section
            .data(endian, bytes)
            .map_err(|_| place.error(section_at(index), "symbol table outside the file"))?;
        let strings = table
            .section(object::SectionIndex(section.sh_link(endian) as usize))
            .ok()
            .and_then(|s| s.data(endian, bytes).ok())
            .unwrap_or(&[]);
        for n in 0..symbols as usize {
            let entry = &data[n * 24..n * 24 + 24];
            let name = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
            let shndx = u16::from_le_bytes([entry[6], entry[7]]);
            let sym_at = section.sh_offset(endian) as usize + n * 24;
            if name as usize >= strings.len().max(1) {
                return Err(place.error(sym_at, format!("symbol {n} of section {index}: name offset {name} lies outside the string table")));
            }
            // 0xff00.. are reserved indices (SHN_ABS, SHN_COMMON, …).
            if shndx < 0xff00 && shndx as u64 >= count {
                return Err(place.error(
                    sym_at + 6,
                    format!("symbol {n} of section {index}: section {shndx} does not exist"),
                ));
            }
        }
    }
    // Relocations: symbol indices within their table.
    for (index, section) in table.iter().enumerate() {
        let sh_type = section.sh_type(endian).0;
        let width = match sh_type {
            SHT_REL => 16,
            SHT_RELA => 24,
            _ => continue,
        };
        let data = section
            .data(endian, bytes)
            .map_err(|_| place.error(section_at(index), "relocation section outside the file"))?;
        let symbols = symbol_counts
            .get(section.sh_link(endian) as usize)
            .copied()
            .flatten()
            .unwrap_or(0);
        for (n, entry) in data.chunks_exact(width).enumerate() {
            let r_info = u64::from_le_bytes(entry[8..16].try_into().unwrap_or([0; 8]));
            let symbol = r_info >> 32;
            if symbol >= symbols {
                return Err(place.error(
                    section.sh_offset(endian) as usize + n * width + 8,
                    format!("relocation {n} of section {index} names symbol {symbol}, but its table has {symbols}"),
                ));
            }
        }
    }
    Ok(())
}

fn elf_type_fact(e_type: u16) -> String {
    match e_type {
        1 => "relocatable".to_string(),
        2 => "executable".to_string(),
        3 => "shared object".to_string(),
        other => format!("ELF type {other}"),
    }
}

fn describe_elf(place: &Place, name: &str, bytes: &[u8]) -> Result<Item, ContainerError> {
    let Elf {
        e_type,
        machine,
        flags,
        sections,
    } = elf_sections(place, bytes)?;
    match machine {
        EM_CUDA => {
            validate_cubin(place, bytes)?;
            let mut item = Item::new(ItemKind::Cubin, name, place.base, bytes.len() as u64);
            // The arch field moved from bits 0..8 (ELF ABI version 7) to
            // bits 8..16 (version 8, CUDA 12.8+). Other versions: unread.
            let abi_version = bytes.get(8).copied().unwrap_or(0);
            let arch = match abi_version {
                7 => Some(flags & 0xff),
                8 => Some((flags >> 8) & 0xff),
                _ => None,
            };
            match arch.filter(|a| *a != 0) {
                Some(a) => item.arch = Some(format!("sm_{a}")),
                None => item.facts.push(format!("ELF ABI version {abi_version}, arch not read")),
            }
            item.facts.push(elf_type_fact(e_type));
            let functions: Vec<&str> = sections
                .iter()
                .filter_map(|s| s.name.strip_prefix(".text."))
                .collect();
            if !functions.is_empty() {
                item.facts.push(format!("functions: {}", functions.join(" ")));
            }
            Ok(item)
        }
        EM_X86_64 | EM_AARCH64 => {
            let mut item = Item::new(ItemKind::HostObject, name, place.base, bytes.len() as u64);
            item.facts.push(if machine == EM_X86_64 { "x86-64" } else { "AArch64" }.to_string());
            item.facts.push(elf_type_fact(e_type));
            for section in &sections {
                if section.name != NV_FATBIN_SECTION && section.name != NV_RELFATBIN_SECTION {
                    continue;
                }
                let Some(data) = section.bytes.filter(|_| !section.nobits) else {
                    return Err(place.error(0, format!("section {} holds no data", section.name)));
                };
                let inner = place.inner(&section.name, section.offset as usize);
                let mut fatbin = Item::new(ItemKind::Fatbin, section.name.clone(), inner.base, section.size);
                describe_fatbin(&inner, data, &mut fatbin)?;
                item.children.push(fatbin);
            }
            if item.children.is_empty() {
                item.facts.push("no device code".to_string());
            }
            Ok(item)
        }
        other => Err(place.error(
            18,
            format!("ELF file for machine {other}: expected an NVIDIA cubin (190) or an x86-64/AArch64 host object"),
        )),
    }
}

/// Reads an `ar` archive (System V/GNU with the long-name table, or BSD)
/// with the `object` crate and classifies every member.
fn describe_library(place: &Place, name: &str, bytes: &[u8]) -> Result<Item, ContainerError> {
    let mut item = Item::new(ItemKind::Library, name, place.base, bytes.len() as u64);
    let archive = object::read::archive::ArchiveFile::parse(bytes)
        .map_err(|e| place.error(0, format!("bad archive: {e}")))?;
    if archive.is_thin() {
        return Err(place.error(
            0,
            "thin archives (members kept outside the file) are not supported",
        ));
    }
    // `object` skips a symbol table it cannot read without saying so; the
    // members (after any symbol and name tables) must reach the end of the
    // file, or a damaged archive would pass as an empty one.
    let mut end = 8u64;
    for member in archive.members() {
        let member = member.map_err(|e| place.error(0, format!("bad archive member: {e}")))?;
        let member_name = String::from_utf8_lossy(member.name()).into_owned();
        let (data_at, size) = member.file_range();
        end = data_at.saturating_add(size);
        let content = member.data(bytes).map_err(|e| {
            place.error(
                data_at as usize,
                format!("archive member `{member_name}` ({size} bytes): {e}"),
            )
        })?;
        let member_place = place.member(&member_name, data_at as usize);
        let member = describe_bytes(&member_place, &member_name, content)?;
        item.children.push(member);
    }
    // Members start on even offsets: one byte of padding may follow.
    let len = bytes.len() as u64;
    if item.children.is_empty() || !(end == len || (end + 1 == len && end % 2 == 1)) {
        return Err(place.error(
            end.min(len) as usize,
            format!(
                "damaged archive: its members end at byte {end} but the file has {len} bytes \
                 (a member's size is wrong, or the archive was cut)"
            ),
        ));
    }
    let count = item.children.len();
    item.facts.push(format!(
        "{count} member{}",
        if count == 1 { "" } else { "s" }
    ));
    Ok(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_is_recognised_after_comments() {
        let ptx = b"//\n// Generated\n/* block */\n.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry kern(\n)";
        let d = describe("k.ptx", ptx).unwrap();
        assert_eq!(d.kind(), ItemKind::Ptx);
        assert_eq!(d.root.arch.as_deref(), Some("compute_90"));
        assert_eq!(d.root.facts, vec!["PTX ISA 9.0", "kernels: kern"]);
    }

    #[test]
    fn unknown_and_empty_inputs_are_errors() {
        let e = describe("x.bin", b"hello world").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(
            e.message
                .contains("unknown content (first bytes: 68 65 6c 6c 6f 20 77 6f)"),
            "{e}"
        );
        let e = describe("empty", b"").unwrap_err();
        assert!(e.message.contains("the input is empty"), "{e}");
        let e = describe("v", b".versionx 1.0").unwrap_err();
        assert!(e.message.contains("unknown content"), "{e}");
    }

    #[test]
    fn truncated_ltoir_header_is_an_error() {
        let e = describe("t.ltoir", &[0xED, 0x43, 0x4E, 0x7F, 1, 2]).unwrap_err();
        assert!(e.message.contains("truncated LTOIR: 6 bytes"), "{e}");
    }

    #[test]
    fn fatbin_sizes_are_checked() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        bytes.extend_from_slice(&1u16.to_le_bytes());
        bytes.extend_from_slice(&16u16.to_le_bytes());
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        let e = describe("f.fatbin", &bytes).unwrap_err();
        assert!(e.message.contains("claims a 16-byte header"), "{e}");
    }
}
