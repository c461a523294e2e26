//! NumPy's `.npy` format: a magic string, a Python-literal header (dtype, order, shape)
//! and the elements.

use super::{lazy_array, Layout, Mapping, Storage};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8] = b"\x93NUMPY";
/// Longest header accepted; NumPy's own default limit is 10 000 bytes.
pub(crate) const MAX_HEADER: usize = 1 << 20;

/// Saves `array` to `path` in `.npy` format, adding the `.npy` extension when missing
/// (MLX: `save(file, arr)`). bfloat16, which NumPy lacks, is stored as MLX stores it:
/// two-byte void elements (`<V2`) that [`load`](crate::load) reads back as bfloat16.
///
/// ```
/// use lazulite::{load, save, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_save");
/// save(&path, &Array::from_slice(&[1.0f32], &[1]).unwrap()).unwrap();
/// let a = load(path.with_extension("npy"), None, false).unwrap().into_array().unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0]);
/// ```
pub fn save(path: impl AsRef<Path>, array: &Array) -> Result<()> {
    let path = super::with_extension(path.as_ref(), "npy");
    let tensor = super::evaluated(&[array])?.remove(0);
    super::write_atomic(&path, |w| {
        super::put(w, &path, &header(tensor.dtype, &tensor.shape)?)?;
        super::put(w, &path, &super::le_bytes(&tensor))
    })
}

/// The complete `.npy` header (magic, version, length, dict, padding) for a C-ordered,
/// little-endian array: padded so that the data starts at a multiple of 64 bytes.
pub(crate) fn header(dtype: DType, shape: &[usize]) -> Result<Vec<u8>> {
    let dims = match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}",
        descr(dtype)
    );
    // Version 1 (a u16 length): even 64 dimensions give a header of about 1.5 kB.
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let len = u16::try_from(dict.len())
        .map_err(|_| Error::value(format!("[save] {} dimensions are too many.", shape.len())))?;
    let mut out = MAGIC.to_vec();
    out.extend([1, 0]);
    out.extend(len.to_le_bytes());
    out.extend(dict.as_bytes());
    Ok(out)
}

fn descr(dtype: DType) -> &'static str {
    use DType::*;
    match dtype {
        Bool => "|b1",
        UInt8 => "|u1",
        UInt16 => "<u2",
        UInt32 => "<u4",
        UInt64 => "<u8",
        Int8 => "|i1",
        Int16 => "<i2",
        Int32 => "<i4",
        Int64 => "<i8",
        Float16 => "<f2",
        BFloat16 => "<V2",
        Float32 => "<f4",
        Float64 => "<f8",
        Complex64 => "<c8",
    }
}

/// What a `.npy` header says.
pub(crate) struct Header {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub layout: Layout,
    /// Bytes before the data.
    pub len: usize,
}

/// Bytes needed to know the header length: magic, version and length field.
pub(crate) const PREAMBLE: usize = 12;

/// The length of the header starting at `bytes` (at least [`PREAMBLE`] bytes or all there
/// is), from its preamble.
pub(crate) fn header_len(bytes: &[u8]) -> std::result::Result<usize, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (bad magic string).".into());
    }
    let len = match bytes[6] {
        1 => 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize,
        2 | 3 if bytes.len() >= 12 => {
            12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
        }
        2 | 3 => return Err("truncated header.".into()),
        v => return Err(format!("unsupported .npy version {v}.")),
    };
    if len > MAX_HEADER {
        return Err(format!("header of {len} bytes is too long."));
    }
    Ok(len)
}

/// Parses the header at the start of `bytes` (which must hold all of it).
pub(crate) fn parse_header(bytes: &[u8]) -> std::result::Result<Header, String> {
    let len = header_len(bytes)?;
    let start = if bytes[6] == 1 { 10 } else { 12 };
    let text = bytes
        .get(start..len)
        .ok_or_else(|| "truncated header.".to_string())?;
    let text = std::str::from_utf8(text).map_err(|_| "header is not text.".to_string())?;
    let mut p = Literal {
        s: text.as_bytes(),
        pos: 0,
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    p.expect(b'{')?;
    loop {
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        match key.as_str() {
            "descr" => descr = Some(p.string()?),
            "fortran_order" => fortran = Some(p.boolean()?),
            "shape" => shape = Some(p.tuple()?),
            other => return Err(format!("unexpected header key '{other}'.")),
        }
        if !p.eat(b',') {
            p.expect(b'}')?;
            break;
        }
    }
    let descr = descr.ok_or("header lacks 'descr'.")?;
    let (dtype, swap) = parse_descr(&descr)?;
    Ok(Header {
        dtype,
        shape: shape.ok_or("header lacks 'shape'.")?,
        layout: Layout {
            swap,
            fortran: fortran.ok_or("header lacks 'fortran_order'.")?,
        },
        len,
    })
}

/// The dtype of a NumPy type string and whether its bytes need swapping here.
fn parse_descr(descr: &str) -> std::result::Result<(DType, bool), String> {
    use DType::*;
    let unknown = || format!("unsupported dtype '{descr}'.");
    let (order, code) = match descr.as_bytes().first() {
        Some(b'<' | b'>' | b'|' | b'=') => descr.split_at(1),
        _ => ("|", descr),
    };
    let dtype = match code {
        "b1" | "?" => Bool,
        "u1" | "B" => UInt8,
        "u2" => UInt16,
        "u4" => UInt32,
        "u8" => UInt64,
        "i1" | "b" => Int8,
        "i2" => Int16,
        "i4" => Int32,
        "i8" => Int64,
        "f2" | "e" => Float16,
        "V2" => BFloat16,
        "f4" | "f" => Float32,
        "f8" | "d" => Float64,
        "c8" | "F" => Complex64,
        _ => return Err(unknown()),
    };
    let little = cfg!(target_endian = "little");
    let swap = dtype.size() > 1
        && match order {
            "<" => !little,
            ">" => little,
            _ => false,
        };
    Ok((dtype, swap))
}

/// A reader of the Python literal in a `.npy` header.
struct Literal<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Literal<'_> {
    fn skip_space(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "malformed header: expected '{}' at {}.",
                c as char, self.pos
            ))
        }
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        self.skip_space();
        let quote = match self.s.get(self.pos) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => {
                return Err(format!(
                    "malformed header: expected a string at {}.",
                    self.pos
                ))
            }
        };
        let start = self.pos + 1;
        let end = self.s[start..]
            .iter()
            .position(|&c| c == quote)
            .ok_or("malformed header: unterminated string.")?;
        self.pos = start + end + 1;
        Ok(String::from_utf8_lossy(&self.s[start..start + end]).into_owned())
    }

    fn boolean(&mut self) -> std::result::Result<bool, String> {
        self.skip_space();
        for (word, value) in [("True", true), ("False", false)] {
            if self.s[self.pos..].starts_with(word.as_bytes()) {
                self.pos += word.len();
                return Ok(value);
            }
        }
        Err("malformed header: 'fortran_order' is not True or False.".into())
    }

    fn tuple(&mut self) -> std::result::Result<Vec<usize>, String> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            self.skip_space();
            let start = self.pos;
            while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
                self.pos += 1;
            }
            let digits = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or_default();
            let dim = digits
                .parse::<usize>()
                .map_err(|_| format!("malformed header: bad dimension at {start}."))?;
            if dims.len() >= 64 {
                return Err("malformed header: too many dimensions.".into());
            }
            dims.push(dim);
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

/// The array of a `.npy` file.
pub(crate) fn load(file: &Arc<Mapping>) -> Result<Array> {
    let op = "load_npy";
    let bytes = file.bytes(0..file.len());
    let header = parse_header(bytes).map_err(|m| file.error(op, m))?;
    load_at(file, op, "array", 0, file.len() as u64, header)
}

/// A lazy array for an npy whose header (already parsed) starts at `start` and which
/// occupies `available` bytes of the file from there.
pub(crate) fn load_at(
    file: &Arc<Mapping>,
    op: &str,
    name: &str,
    start: u64,
    available: u64,
    header: Header,
) -> Result<Array> {
    let data = super::byte_size(file, op, &header.shape, header.dtype)?;
    let fits = (header.len as u64)
        .checked_add(data)
        .is_some_and(|end| end <= available);
    if !fits {
        return Err(file.error(
            op,
            format!(
                "'{name}' of shape {:?} and dtype {} needs {} bytes of data but {} remain \
                 (truncated or corrupt).",
                header.shape,
                header.dtype,
                data,
                available.saturating_sub(header.len as u64)
            ),
        ));
    }
    let range = file.range(op, name, start + header.len as u64, data)?;
    Ok(lazy_array(
        file,
        name,
        Storage::Raw(range),
        header.layout,
        header.shape,
        header.dtype,
    ))
}
