//! A defensive reader of the cubin's ELF container, used before the driver
//! sees the bytes: `cuModuleLoadData` takes no length, so a truncated or
//! corrupt file must be caught here, not by reading past the buffer.

/// What the runtime needs to know about a cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubinInfo {
    /// Names of the function symbols (kernels and device functions).
    pub functions: Vec<String>,
}

const EM_CUDA: u16 = 190;
const SHT_SYMTAB: u32 = 2;
const SHT_NOBITS: u32 = 8;
const STT_FUNC: u8 = 2;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// `start..start+len` as a checked range inside `total`.
fn span(start: u64, len: u64, total: usize) -> Option<std::ops::Range<usize>> {
    let end = start.checked_add(len)?;
    if end > total as u64 {
        return None;
    }
    Some(start as usize..end as usize)
}

struct Section {
    kind: u32,
    link: u32,
    offset: u64,
    size: u64,
    entsize: u64,
}

/// Checks every header, section and segment lies inside `bytes`, and lists
/// the function symbols.
pub fn read_cubin(bytes: &[u8]) -> Result<CubinInfo, String> {
    if bytes.len() < 64 {
        return Err(format!(
            "{} bytes is shorter than an ELF header",
            bytes.len()
        ));
    }
    if &bytes[..4] != b"\x7fELF" {
        return Err(
            "no ELF magic (a cubin is an ELF file; PTX or fatbin is not accepted here)".into(),
        );
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err("not a 64-bit little-endian ELF".into());
    }
    let truncated = || "truncated ELF header".to_string();
    let machine = u16_at(bytes, 0x12).ok_or_else(truncated)?;
    if machine != EM_CUDA {
        return Err(format!("ELF machine {machine} is not CUDA ({EM_CUDA})"));
    }
    let phoff = u64_at(bytes, 0x20).ok_or_else(truncated)?;
    let shoff = u64_at(bytes, 0x28).ok_or_else(truncated)?;
    let phentsize = u16_at(bytes, 0x36).ok_or_else(truncated)? as u64;
    let phnum = u16_at(bytes, 0x38).ok_or_else(truncated)? as u64;
    let shentsize = u16_at(bytes, 0x3A).ok_or_else(truncated)? as u64;
    let shnum = u16_at(bytes, 0x3C).ok_or_else(truncated)? as u64;
    if shnum == 0 {
        return Err("no sections".into());
    }
    if shentsize != 64 || (phnum > 0 && phentsize != 56) {
        return Err(format!(
            "unexpected header entry sizes (section {shentsize}, segment {phentsize})"
        ));
    }
    span(shoff, shnum * shentsize, bytes.len()).ok_or_else(|| {
        format!(
            "section headers at {shoff} run past the end ({} bytes): truncated?",
            bytes.len()
        )
    })?;
    if phnum > 0 {
        span(phoff, phnum * phentsize, bytes.len())
            .ok_or_else(|| format!("segment headers at {phoff} run past the end: truncated?"))?;
        for i in 0..phnum {
            let at = (phoff + i * phentsize) as usize;
            let offset = u64_at(bytes, at + 8).ok_or_else(truncated)?;
            let filesz = u64_at(bytes, at + 0x20).ok_or_else(truncated)?;
            span(offset, filesz, bytes.len()).ok_or_else(|| {
                format!("segment {i} ({filesz} bytes at {offset}) runs past the end: truncated?")
            })?;
        }
    }
    let mut sections = Vec::with_capacity(shnum as usize);
    for i in 0..shnum {
        let at = (shoff + i * shentsize) as usize;
        let section = Section {
            kind: u32_at(bytes, at + 4).ok_or_else(truncated)?,
            offset: u64_at(bytes, at + 0x18).ok_or_else(truncated)?,
            size: u64_at(bytes, at + 0x20).ok_or_else(truncated)?,
            link: u32_at(bytes, at + 0x28).ok_or_else(truncated)?,
            entsize: u64_at(bytes, at + 0x38).ok_or_else(truncated)?,
        };
        if section.kind != SHT_NOBITS && span(section.offset, section.size, bytes.len()).is_none() {
            return Err(format!(
                "section {i} ({} bytes at {}) runs past the end ({} bytes): truncated?",
                section.size,
                section.offset,
                bytes.len()
            ));
        }
        sections.push(section);
    }
    let mut functions = Vec::new();
    for symtab in sections.iter().filter(|s| s.kind == SHT_SYMTAB) {
        if symtab.entsize != 24 {
            return Err(format!(
                "symbol table entry size {} is not 24",
                symtab.entsize
            ));
        }
        let strtab = sections
            .get(symtab.link as usize)
            .ok_or_else(|| format!("symbol table links to missing section {}", symtab.link))?;
        let strings =
            &bytes[span(strtab.offset, strtab.size, bytes.len()).ok_or_else(truncated)?];
        for k in 0..symtab.size / 24 {
            let at = (symtab.offset + k * 24) as usize;
            let name_at = u32_at(bytes, at).ok_or_else(truncated)? as usize;
            let info = bytes[at + 4];
            if info & 0xf != STT_FUNC {
                continue;
            }
            let tail = strings.get(name_at..).ok_or_else(|| {
                format!("symbol {k} names string {name_at} past the string table")
            })?;
            let end = tail
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| format!("symbol {k}'s name is not terminated"))?;
            functions.push(String::from_utf8_lossy(&tail[..end]).into_owned());
        }
    }
    Ok(CubinInfo { functions })
}
