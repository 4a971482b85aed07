//! A closure object's layout as data, with no rustc run: the shapes of its
//! captures ([`Shape`], [`shape_of`]), rustc's layout of it
//! ([`ClosureLayout`]: each captured scalar's place, checked well-formed),
//! the environment fields it gives ([`place_captures`], [`leaf_name`]), and
//! the layout a prepared document records, checked against its captures
//! ([`ClosureLayout::of_recorded`]). `closure_layout` measures the layouts
//! with a probe built by rustc; this is what validation of a document reads.

use crate::ty::{Scalar, Ty};

/// A capture's type as the probe spells and measures it: a scalar, or an
/// aggregate of scalars held by value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Shape {
    Scalar(Scalar),
    Tuple(Vec<Shape>),
    /// `[T; N]`: element `i` lies `i` element sizes in, as the language
    /// guarantees.
    Array(Box<Shape>, u64),
    /// A struct of the crate: its path, its `#[repr(…)]` options and its
    /// field types in declaration order (rustc's layout of a struct depends
    /// on those alone, not on the field names).
    Struct {
        path: String,
        repr: Vec<String>,
        fields: Vec<Shape>,
    },
    /// A closure captured whole: its captures' types in field order.
    Closure(Vec<Shape>),
}

impl From<Scalar> for Shape {
    fn from(s: Scalar) -> Shape {
        Shape::Scalar(s)
    }
}

impl Shape {
    /// The type as Rust spells it (a closure as `closure(u8, i32)`).
    pub fn name(&self) -> String {
        let list = |parts: &[Shape]| parts.iter().map(Shape::name).collect::<Vec<_>>().join(", ");
        match self {
            Shape::Scalar(s) => s.name().to_string(),
            Shape::Tuple(parts) if parts.len() == 1 => format!("({},)", parts[0].name()),
            Shape::Tuple(parts) => format!("({})", list(parts)),
            Shape::Array(e, n) => format!("[{}; {n}]", e.name()),
            Shape::Struct { path, .. } => path.clone(),
            Shape::Closure(parts) => format!("closure({})", list(parts)),
        }
    }

    /// Its scalars in field order, each with its path of field (or
    /// element) indices; a scalar is one leaf with an empty path.
    pub fn leaves(&self) -> Vec<(Vec<u32>, Scalar)> {
        let mut out = Vec::new();
        self.collect_leaves(&mut Vec::new(), &mut out);
        out
    }

    fn collect_leaves(&self, path: &mut Vec<u32>, out: &mut Vec<(Vec<u32>, Scalar)>) {
        let mut visit = |i: u64, part: &Shape, out: &mut Vec<(Vec<u32>, Scalar)>| {
            path.push(i as u32);
            part.collect_leaves(path, out);
            path.pop();
        };
        match self {
            Shape::Scalar(s) => out.push((path.clone(), *s)),
            Shape::Tuple(parts) | Shape::Struct { fields: parts, .. } | Shape::Closure(parts) => {
                for (i, part) in parts.iter().enumerate() {
                    visit(i as u64, part, out);
                }
            }
            Shape::Array(e, n) => {
                for i in 0..*n {
                    visit(i, e, out);
                }
            }
        }
    }

    /// How many scalars it holds, without listing them.
    pub fn leaf_count(&self) -> u64 {
        match self {
            Shape::Scalar(_) => 1,
            Shape::Tuple(parts) | Shape::Struct { fields: parts, .. } | Shape::Closure(parts) => {
                parts.iter().map(Shape::leaf_count).sum()
            }
            Shape::Array(e, n) => e.leaf_count().saturating_mul(*n),
        }
    }

    pub(crate) fn scalars(&self) -> Vec<Scalar> {
        self.leaves().into_iter().map(|(_, s)| s).collect()
    }
}

/// The most scalars the captures of one closure may hold: each is a field
/// of the probe's report and of the environment.
pub const MAX_CAPTURED_SCALARS: u64 = 4096;

/// One captured scalar's place in a closure object: a scalar capture, or a
/// scalar inside an aggregate capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureField {
    /// The capture it belongs to (its field index in the closure).
    pub capture: usize,
    /// Field (or element) indices inside the capture; empty for a scalar
    /// capture.
    pub path: Vec<u32>,
    pub scalar: Scalar,
    /// From the start of the closure object.
    pub offset: u64,
    pub size: u64,
    pub align: u64,
}

/// rustc's layout of one closure: each capture's offset, and every scalar
/// the captures hold, in capture order and then field order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosureLayout {
    pub fields: Vec<CaptureField>,
    /// Each capture's offset, in capture order.
    pub captures: Vec<u64>,
    pub size: u64,
    pub align: u64,
}

/// One captured scalar placed in a closure object, in the shape of
/// `manifest::env::EnvField`: a scalar capture by its name (`k`), a scalar
/// inside an aggregate capture by the capture's name and its path of field
/// indices (`t.1`, `p.0.2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedCapture {
    pub name: String,
    pub scalar: Scalar,
    pub offset: u64,
    pub size: u64,
    pub align: u64,
}

impl CaptureField {
    /// `capture 3 (u16)`, `capture 1.0.2 (f32)`: how messages name it.
    pub(crate) fn describe(&self) -> String {
        let mut at = self.capture.to_string();
        for i in &self.path {
            at.push_str(&format!(".{i}"));
        }
        format!("capture {at} ({})", self.scalar.name())
    }
}

impl ClosureLayout {
    /// The captures' offsets, in capture order.
    pub fn offsets(&self) -> Vec<u64> {
        self.captures.clone()
    }

    /// Checks that the layout is well-formed: a power-of-two alignment that
    /// divides the size, every captured scalar aligned, inside the object,
    /// and overlapping no other, and each capture's scalars after its start.
    pub fn validate(&self) -> Result<(), String> {
        if !self.align.is_power_of_two() {
            return Err(format!("alignment {} is not a power of two", self.align));
        }
        if !self.size.is_multiple_of(self.align) {
            return Err(format!(
                "size {} is not a multiple of the alignment {}",
                self.size, self.align
            ));
        }
        for f in &self.fields {
            let start = self.captures.get(f.capture).copied();
            if start.is_none_or(|start| f.offset < start) {
                return Err(format!(
                    "{} at offset {} lies before its capture",
                    f.describe(),
                    f.offset
                ));
            }
            if !f.align.is_power_of_two() || f.align > self.align || f.offset % f.align != 0 {
                return Err(format!(
                    "{} at offset {} is not aligned to {} within alignment {}",
                    f.describe(),
                    f.offset,
                    f.align,
                    self.align
                ));
            }
            if f.offset + f.size > self.size {
                return Err(format!(
                    "{} at offset {} ends past the object's {} bytes",
                    f.describe(),
                    f.offset,
                    self.size
                ));
            }
        }
        let mut order: Vec<&CaptureField> = self.fields.iter().collect();
        order.sort_by_key(|f| f.offset);
        for pair in order.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.offset + a.size > b.offset {
                return Err(format!(
                    "{} and {} overlap (offsets {} and {})",
                    a.describe().replacen("capture ", "captures ", 1),
                    b.describe().trim_start_matches("capture "),
                    a.offset,
                    b.offset
                ));
            }
        }
        Ok(())
    }

    /// Each captured scalar's bytes, in field order, sliced out of
    /// `image`, the bytes of a closure object with this layout.
    pub fn capture_bytes<'a>(&self, image: &'a [u8]) -> Result<Vec<&'a [u8]>, String> {
        if image.len() as u64 != self.size {
            return Err(format!(
                "an image of {} bytes, for a closure of {} bytes",
                image.len(),
                self.size
            ));
        }
        self.fields
            .iter()
            .map(|f| {
                let (start, end) = (f.offset as usize, (f.offset + f.size) as usize);
                image
                    .get(start..end)
                    .ok_or_else(|| format!("{} lies outside the image", f.describe()))
            })
            .collect()
    }
}

/// The name of a captured scalar in an environment: the capture's name,
/// then its path of field indices (`t.1`, `p.0.2`).
pub fn leaf_name(capture: &str, path: &[u32]) -> String {
    let mut name = capture.to_string();
    for i in path {
        name.push_str(&format!(".{i}"));
    }
    name
}

/// Pairs `captures` (name and type, in capture order) with their places in
/// `layout`, one per captured scalar ([`leaf_name`]). Fails when the types
/// are not the layout's.
pub fn place_captures<S: AsRef<str>, T: Clone + Into<Shape>>(
    captures: &[(S, T)],
    layout: &ClosureLayout,
) -> Result<Vec<PlacedCapture>, String> {
    if captures.len() != layout.captures.len() {
        return Err(format!(
            "{} captures for a layout of {}",
            captures.len(),
            layout.captures.len()
        ));
    }
    let mut fields = layout.fields.iter();
    let mut placed = Vec::new();
    for (k, (name, ty)) in captures.iter().enumerate() {
        let shape: Shape = ty.clone().into();
        for (path, scalar) in shape.leaves() {
            let f = fields
                .next()
                .filter(|f| f.capture == k && f.path == path)
                .ok_or_else(|| {
                    format!(
                        "capture {k} `{}` is {}, the layout holds other fields",
                        name.as_ref(),
                        shape.name()
                    )
                })?;
            if scalar != f.scalar {
                return Err(format!(
                    "capture {k} `{}` is {}, the layout's field is {}",
                    name.as_ref(),
                    shape.name(),
                    f.scalar.name()
                ));
            }
            placed.push(PlacedCapture {
                name: leaf_name(name.as_ref(), &path),
                scalar: f.scalar,
                offset: f.offset,
                size: f.size,
                align: f.align,
            });
        }
    }
    if fields.next().is_some() {
        return Err("the layout holds more fields than the captures".to_string());
    }
    Ok(placed)
}

pub(crate) fn is_stable(scalar: Scalar) -> bool {
    !matches!(scalar, Scalar::F16 | Scalar::F128)
}

/// The shapes of a closure's captures in capture order, when every capture
/// is held by value and is a stable scalar or an aggregate of them
/// ([`shape_of`]); `None` for any other closure.
pub(crate) fn measurable(
    c: &crate::pmir::Closure,
    doc: &crate::pmir::PreparedMir,
) -> Option<Vec<Shape>> {
    closure_shapes(c, doc, 0)
}

/// How deeply aggregates may nest in a capture (a closure capturing a
/// closure capturing a tuple is three).
const MAX_DEPTH: usize = 8;

fn closure_shapes(
    c: &crate::pmir::Closure,
    doc: &crate::pmir::PreparedMir,
    depth: usize,
) -> Option<Vec<Shape>> {
    let mut captures: Vec<&crate::pmir::Capture> = c.captures.iter().collect();
    captures.sort_by_key(|k| k.field);
    if captures
        .iter()
        .enumerate()
        .any(|(i, k)| k.field as usize != i)
    {
        return None;
    }
    let shapes: Vec<Shape> = captures
        .iter()
        .map(|k| match k.mode {
            crate::pmir::CaptureMode::ByValue => shape_of(&k.ty, doc, depth),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let held: u64 = shapes.iter().map(Shape::leaf_count).sum();
    (held <= MAX_CAPTURED_SCALARS).then_some(shapes)
}

/// A capture type's shape: a stable scalar; a tuple or array of shapes; a
/// non-generic struct of the crate whose fields are shapes; a closure of
/// the document whose captures are shapes held by value. `None` for
/// anything else (references, pointers, enums, `std` types).
pub fn shape_of(ty: &Ty, doc: &crate::pmir::PreparedMir, depth: usize) -> Option<Shape> {
    if depth > MAX_DEPTH {
        return None;
    }
    let inner = |t: &Ty| shape_of(t, doc, depth + 1);
    match ty {
        Ty::Scalar(s) => is_stable(*s).then_some(Shape::Scalar(*s)),
        Ty::Tuple(parts) if !parts.is_empty() => Some(Shape::Tuple(
            parts.iter().map(inner).collect::<Option<_>>()?,
        )),
        Ty::Array(e, n) => {
            let n: u64 = n.trim_end_matches("_usize").parse().ok()?;
            (n > 0 && n <= MAX_CAPTURED_SCALARS).then_some(())?;
            Some(Shape::Array(Box::new(inner(e)?), n))
        }
        Ty::Adt { path, args } if args.is_empty() => {
            let def = doc.adts.iter().find(|d| &d.path == path)?;
            if def.kind != crate::adt::AdtKind::Struct || !def.params.is_empty() {
                return None;
            }
            let fields = &def.variants.first()?.fields;
            if fields.is_empty() {
                return None;
            }
            Some(Shape::Struct {
                path: path.clone(),
                repr: def.repr.clone(),
                fields: fields.iter().map(inner).collect::<Option<_>>()?,
            })
        }
        Ty::Closure { .. } => {
            let c = doc.closures.iter().find(|c| &c.ty == ty)?;
            let parts = closure_shapes(c, doc, depth + 1)?;
            (!parts.is_empty()).then_some(Shape::Closure(parts))
        }
        _ => None,
    }
}

/// A scalar's size and alignment (equal for every scalar, on x86-64 and
/// nvptx64 alike).
pub(crate) fn natural(s: Scalar) -> (u64, u64) {
    let size = s.size();
    (size, size)
}

impl ClosureLayout {
    /// The layout `layout` gives a closure with `captures` (capture order),
    /// for checking a recorded layout: the capture count must agree, every
    /// scalar of an aggregate capture must be recorded in field order, and
    /// each field's size and alignment are its scalar's.
    pub fn of_recorded(
        captures: &[Shape],
        layout: &crate::pmir::ObjectLayout,
    ) -> Result<ClosureLayout, String> {
        if captures.len() != layout.offsets.len() {
            return Err(format!(
                "{} offsets for {} captures",
                layout.offsets.len(),
                captures.len()
            ));
        }
        let mut recorded = layout.leaves.iter();
        let mut fields = Vec::new();
        for (k, (shape, &start)) in captures.iter().zip(&layout.offsets).enumerate() {
            for (path, scalar) in shape.leaves() {
                let offset = if path.is_empty() {
                    start
                } else {
                    let leaf = recorded
                        .next()
                        .filter(|l| {
                            l.capture as usize == k
                                && l.path == path
                                && l.ty.scalar() == Some(scalar)
                        })
                        .ok_or_else(|| {
                            format!(
                                "capture {k} is `{}`, whose scalars are not the recorded ones",
                                shape.name()
                            )
                        })?;
                    leaf.offset
                };
                let (size, align) = natural(scalar);
                fields.push(CaptureField {
                    capture: k,
                    path,
                    scalar,
                    offset,
                    size,
                    align,
                });
            }
        }
        if recorded.next().is_some() {
            return Err("scalars are recorded for no capture".to_string());
        }
        let l = ClosureLayout {
            fields,
            captures: layout.offsets.clone(),
            size: layout.size,
            align: layout.align,
        };
        l.validate()?;
        Ok(l)
    }
}
