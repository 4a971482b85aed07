//! Builds embedded in a program: the records of the `rmir_artifacts` linker
//! section.
//!
//! `driver cargo build` writes each Cargo target's compiled callbacks (a
//! manifest and its cubins) as one [`Record`], and links the records of a
//! binary and of every library it uses into it, in an object file of its own
//! passed to the final link (never inside an rlib: with LTO, rustc reads the
//! objects of an rlib as bitcode). The linker concatenates the section's
//! pieces; `native::gpu` reads them back between `__start_rmir_artifacts`
//! and `__stop_rmir_artifacts`.
//!
//! A record is little-endian, 8-byte aligned and a multiple of 8 bytes long:
//!
//! ```text
//! magic "RMIRART1" | kind u32 | reserved u32 | length u64 (whole record)
//! kind 0 (placeholder): nothing more
//! kind 1 (build):  str target | str manifest JSON | u32 n | n × (str name | blob cubin)
//! str = u32 length + bytes, blob = u64 length + bytes, then zeros to 8
//! ```
//!
//! Zero bytes between records (alignment padding the linker adds) are
//! skipped. Anything else is an error naming its byte offset: a program
//! whose embedded builds cannot be read launches nothing.

/// The linker section the records live in (a C identifier, so that the
/// linker defines `__start_` and `__stop_` symbols for it).
pub const SECTION: &str = "rmir_artifacts";
pub const MAGIC: &[u8; 8] = b"RMIRART1";
const HEADER: usize = 24;

/// One embedded build: the Cargo target it belongs to, its manifest and its
/// cubins (by the names the manifest uses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub target: String,
    pub manifest: String,
    pub cubins: Vec<(String, Vec<u8>)>,
}

/// The 24 bytes of a placeholder record: what `native::gpu` puts in the
/// section itself, so that the section exists in every program.
pub const PLACEHOLDER: [u8; HEADER] = [
    b'R',
    b'M',
    b'I',
    b'R',
    b'A',
    b'R',
    b'T',
    b'1',
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    HEADER as u8,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
];

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s);
    pad8(out);
}

fn put_blob(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
    pad8(out);
}

impl Record {
    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            HEADER
                + self.manifest.len()
                + self.cubins.iter().map(|c| c.1.len() + 32).sum::<usize>()
                + 64,
        );
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        put_str(&mut out, self.target.as_bytes());
        put_str(&mut out, self.manifest.as_bytes());
        out.extend_from_slice(&(self.cubins.len() as u32).to_le_bytes());
        pad8(&mut out);
        for (name, bytes) in &self.cubins {
            put_str(&mut out, name.as_bytes());
            put_blob(&mut out, bytes);
        }
        let len = out.len() as u64;
        out[16..24].copy_from_slice(&len.to_le_bytes());
        out
    }
}

/// Reads little-endian fields, every read bounds-checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    base: usize,
}

impl<'a> Cursor<'a> {
    fn fail(&self, what: &str) -> String {
        format!("{SECTION} byte {}: {what}", self.base + self.at)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.fail(&format!("{what} runs past the record")))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn align(&mut self) {
        self.at = self.at.next_multiple_of(8).min(self.bytes.len());
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn str(&mut self, what: &str) -> Result<String, String> {
        let n = self.u32(what)? as usize;
        let b = self.take(n, what)?;
        let s = std::str::from_utf8(b)
            .map_err(|_| self.fail(&format!("{what} is not UTF-8")))?
            .to_string();
        self.align();
        Ok(s)
    }

    fn blob(&mut self, what: &str) -> Result<Vec<u8>, String> {
        let n = usize::try_from(self.u64(what)?).map_err(|_| self.fail("length too large"))?;
        let b = self.take(n, what)?.to_vec();
        self.align();
        Ok(b)
    }
}

/// Every build record in a section's bytes, in link order (placeholders
/// are skipped).
pub fn read_section(section: &[u8]) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    let mut at = 0usize;
    while at < section.len() {
        if section[at] == 0 {
            at += 1;
            continue;
        }
        let rest = &section[at..];
        if rest.len() < HEADER || &rest[..8] != MAGIC {
            return Err(format!(
                "{SECTION} byte {at}: not a record (a program built by another version, or \
                 damaged)"
            ));
        }
        let mut c = Cursor {
            bytes: rest,
            at: 8,
            base: at,
        };
        let kind = c.u32("kind")?;
        let _reserved = c.u32("reserved")?;
        let len = usize::try_from(c.u64("length")?).map_err(|_| c.fail("length too large"))?;
        if len < HEADER || len > rest.len() || !len.is_multiple_of(8) {
            return Err(c.fail(&format!("record length {len} is not usable")));
        }
        let mut c = Cursor {
            bytes: &rest[..len],
            at: HEADER,
            base: at,
        };
        match kind {
            0 => {}
            1 => {
                let target = c.str("target name")?;
                let manifest = c.str("manifest")?;
                let n = c.u32("cubin count")?;
                c.align();
                let mut cubins = Vec::new();
                for _ in 0..n {
                    let name = c.str("cubin name")?;
                    let bytes = c.blob("cubin")?;
                    cubins.push((name, bytes));
                }
                records.push(Record {
                    target,
                    manifest,
                    cubins,
                });
            }
            k => return Err(c.fail(&format!("unknown record kind {k}"))),
        }
        at += len;
    }
    Ok(records)
}

/// The bytes of section `name` of a 64-bit little-endian ELF file (a
/// program or shared library), `None` when it has no such section. Every
/// header read is bounds-checked.
pub fn elf_section<'a>(elf: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, String> {
    let u16_at = |at: usize| {
        elf.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        elf.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        elf.get(at..at + 8).map(|b| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        })
    };
    if elf.len() < 64 || &elf[..4] != b"\x7fELF" || elf[4] != 2 || elf[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let bad = || "truncated ELF section headers".to_string();
    let shoff = u64_at(0x28).ok_or_else(bad)? as usize;
    let shentsize = u16_at(0x3A).ok_or_else(bad)? as usize;
    let shnum = u16_at(0x3C).ok_or_else(bad)? as usize;
    let shstrndx = u16_at(0x3E).ok_or_else(bad)? as usize;
    if shentsize != 64 || shstrndx >= shnum {
        return Err("unexpected ELF section header layout".into());
    }
    let header = |i: usize| -> Result<(u32, u32, u64, u64), String> {
        let at = shoff.checked_add(i * shentsize).ok_or_else(bad)?;
        Ok((
            u32_at(at).ok_or_else(bad)?,
            u32_at(at + 4).ok_or_else(bad)?,
            u64_at(at + 0x18).ok_or_else(bad)?,
            u64_at(at + 0x20).ok_or_else(bad)?,
        ))
    };
    let range = |offset: u64, size: u64| -> Result<std::ops::Range<usize>, String> {
        let start = usize::try_from(offset).map_err(|_| bad())?;
        let end = start
            .checked_add(usize::try_from(size).map_err(|_| bad())?)
            .filter(|&e| e <= elf.len())
            .ok_or_else(|| "an ELF section runs past the end of the file".to_string())?;
        Ok(start..end)
    };
    let (_, _, str_off, str_size) = header(shstrndx)?;
    let names = &elf[range(str_off, str_size)?];
    for i in 0..shnum {
        let (name_at, kind, offset, size) = header(i)?;
        let Some(tail) = names.get(name_at as usize..) else {
            continue;
        };
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        if &tail[..end] == name.as_bytes() {
            // SHT_NOBITS has no bytes in the file.
            if kind == 8 {
                return Ok(Some(&[]));
            }
            return Ok(Some(&elf[range(offset, size)?]));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_a_concatenated_section() {
        let a = Record {
            target: "lib sums".into(),
            manifest: "{\"format\":\"manifest/1\"}".into(),
            cubins: vec![("callbacks.cubin".into(), vec![1, 2, 3, 4, 5])],
        };
        let b = Record {
            target: "bin app".into(),
            manifest: "{}".into(),
            cubins: vec![],
        };
        let mut section = PLACEHOLDER.to_vec();
        section.extend(a.encode());
        section.extend([0u8; 8]); // linker padding
        section.extend(b.encode());
        assert_eq!(a.encode().len() % 8, 0);
        assert_eq!(read_section(&section).unwrap(), vec![a.clone(), b]);
        // Truncation and foreign bytes are errors, never a panic.
        let whole = a.encode();
        for cut in [1, 9, 23, 30, whole.len() - 1] {
            let mut s = whole.clone();
            s.truncate(cut);
            assert!(read_section(&s).is_err(), "cut at {cut}");
        }
        assert!(read_section(b"garbage!").is_err());
        let mut bad_len = whole.clone();
        bad_len[16] = 0xff;
        assert!(read_section(&bad_len).is_err());
    }
}
