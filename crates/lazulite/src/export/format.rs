//! The bytes of MLX's function files (`.mlxfn`): little-endian numbers, `u64`
//! length-prefixed strings and vectors, dtypes as `(Dtype::Val as i32, size as u8)`,
//! shapes as vectors of `i32`, streams as three `i32`s, `bool` as one byte.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::io::Mapping;
use crate::primitive::MlxState;
use std::ops::Range;
use std::sync::Arc;

/// The version written in the header of files lazulite writes: the MLX release whose
/// format they follow.
pub(crate) const MLX_VERSION: &str = "0.32.4";

/// Appends MLX's encoding of values to a byte vector.
#[derive(Default)]
pub(crate) struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }

    pub fn i32(&mut self, v: i32) {
        self.bytes.extend(v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.bytes.extend(v.to_le_bytes());
    }

    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes.extend(s.as_bytes());
    }

    pub fn strs(&mut self, v: &[String]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|s| self.str(s));
    }

    pub fn ids(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|&i| self.u64(i));
    }

    /// A shape, whose sizes the caller has checked fit in `i32`.
    pub fn shape(&mut self, shape: &[usize]) {
        self.u64(shape.len() as u64);
        shape.iter().for_each(|&d| self.i32(d as i32));
    }

    pub fn dtype(&mut self, dtype: DType) {
        let val = dtype.mlx_val();
        self.i32(val.expect("only MLX's dtypes are written") as i32);
        self.u8(dtype.size() as u8);
    }

    /// The CPU stream MLX's default device uses: index 0, `Device::cpu` (0), device 0.
    pub fn stream(&mut self) {
        self.i32(0);
        self.i32(0);
        self.i32(0);
    }

    pub fn state(&mut self, state: &[MlxState]) {
        for field in state {
            match field {
                MlxState::Int(v) => self.i32(*v),
                MlxState::Bool(v) => self.bool(*v),
                MlxState::Float(v) => self.bytes.extend(v.to_le_bytes()),
                MlxState::Double(v) => self.bytes.extend(v.to_le_bytes()),
                MlxState::Ints(v) | MlxState::Shape(v) => {
                    self.u64(v.len() as u64);
                    v.iter().for_each(|&i| self.i32(i));
                }
                MlxState::Dtype(d) => self.dtype(*d),
                MlxState::Int64s(v) => {
                    self.u64(v.len() as u64);
                    v.iter().for_each(|&i| self.bytes.extend(i.to_le_bytes()));
                }
                MlxState::Size(v) => self.u64(*v),
                MlxState::Sizes(v) => {
                    self.u64(v.len() as u64);
                    v.iter().for_each(|&i| self.u64(i));
                }
                MlxState::Str(v) => self.str(v),
            }
        }
    }
}

/// The type of one field of a primitive's state, to read it.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Field {
    Int,
    Bool,
    Float,
    Double,
    Ints,
    Dtype,
    /// `std::vector<int64_t>` (strides).
    Int64s,
    /// `size_t`.
    Size,
    /// `std::vector<size_t>`.
    Sizes,
    /// `std::string`.
    Str,
    /// MLX's `nullptr` placeholder for a fast primitive's fallback: no bytes.
    Null,
}

/// Reads MLX's encoding from a file's bytes, checking every length against what is left.
pub(crate) struct Reader {
    file: Arc<Mapping>,
    pos: usize,
}

impl Reader {
    pub fn new(file: Arc<Mapping>) -> Reader {
        Reader { file, pos: 0 }
    }

    pub fn file(&self) -> &Arc<Mapping> {
        &self.file
    }

    /// A malformed-file error at the current position.
    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        self.file.error(
            "import_function",
            format!("{message} (at byte {})", self.pos),
        )
    }

    fn remaining(&self) -> usize {
        self.file.len() - self.pos
    }

    /// The next `n` bytes' range, advancing past them.
    pub fn take(&mut self, n: u64, what: &str) -> Result<Range<usize>> {
        let range = self
            .file
            .range("import_function", what, self.pos as u64, n)?;
        self.pos = range.end;
        Ok(range)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let range = self.take(N as u64, what)?;
        Ok(self.file.bytes(range).try_into().expect("N bytes"))
    }

    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub fn bool(&mut self, what: &str) -> Result<bool> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.error(format!("{what}: {b} is not a boolean"))),
        }
    }

    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A vector's length, refused when its `item_size`-byte items cannot fit in what is
    /// left of the file (so a corrupt length never sizes an allocation).
    pub fn len(&mut self, item_size: usize, what: &str) -> Result<usize> {
        let n = self.u64(what)?;
        if n.saturating_mul(item_size as u64) > self.remaining() as u64 {
            return Err(self.error(format!(
                "{what}: a length of {n} does not fit in the rest of the file"
            )));
        }
        Ok(n as usize)
    }

    pub fn str(&mut self, what: &str) -> Result<String> {
        let n = self.len(1, what)?;
        let range = self.take(n as u64, what)?;
        String::from_utf8(self.file.bytes(range).to_vec())
            .map_err(|_| self.error(format!("{what} is not UTF-8")))
    }

    pub fn strs(&mut self, what: &str) -> Result<Vec<String>> {
        let n = self.len(8, what)?;
        (0..n).map(|_| self.str(what)).collect()
    }

    pub fn ids(&mut self, what: &str) -> Result<Vec<u64>> {
        let n = self.len(8, what)?;
        (0..n).map(|_| self.u64(what)).collect()
    }

    pub fn ints(&mut self, what: &str) -> Result<Vec<i32>> {
        let n = self.len(4, what)?;
        (0..n).map(|_| self.i32(what)).collect()
    }

    pub fn shape(&mut self, what: &str) -> Result<Vec<usize>> {
        let dims = self.ints(what)?;
        dims.iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| self.error(format!("{what}: negative size in {dims:?}")))
    }

    pub fn dtype(&mut self, what: &str) -> Result<DType> {
        let val = self.i32(what)?;
        let size = self.u8(what)?;
        let dtype = u8::try_from(val).ok().and_then(DType::from_mlx_val);
        match dtype {
            Some(d) if d.size() == size as usize => Ok(d),
            _ => Err(self.error(format!("{what}: unknown dtype ({val}, size {size})"))),
        }
    }

    /// A stream: only the device type matters here, and it must be one MLX knows.
    pub fn stream(&mut self) -> Result<()> {
        self.i32("stream index")?;
        let device = self.i32("stream device")?;
        self.i32("stream device index")?;
        if !(0..=1).contains(&device) {
            return Err(self.error(format!("unknown device type {device}")));
        }
        Ok(())
    }

    pub fn state(&mut self, fields: &[Field]) -> Result<Vec<MlxState>> {
        let what = "primitive state";
        fields
            .iter()
            .filter(|f| !matches!(f, Field::Null))
            .map(|f| {
                Ok(match f {
                    Field::Int => MlxState::Int(self.i32(what)?),
                    Field::Bool => MlxState::Bool(self.bool(what)?),
                    Field::Float => MlxState::Float(f32::from_le_bytes(self.array(what)?)),
                    Field::Double => MlxState::Double(f64::from_le_bytes(self.array(what)?)),
                    Field::Ints => MlxState::Ints(self.ints(what)?),
                    Field::Dtype => MlxState::Dtype(self.dtype(what)?),
                    Field::Int64s => {
                        let n = self.len(8, what)?;
                        let v = (0..n)
                            .map(|_| Ok(i64::from_le_bytes(self.array(what)?)))
                            .collect::<Result<Vec<i64>>>()?;
                        MlxState::Int64s(v)
                    }
                    Field::Size => MlxState::Size(self.u64(what)?),
                    Field::Sizes => {
                        let n = self.len(8, what)?;
                        MlxState::Sizes((0..n).map(|_| self.u64(what)).collect::<Result<_>>()?)
                    }
                    Field::Str => MlxState::Str(self.str(what)?),
                    Field::Null => unreachable!("filtered out"),
                })
            })
            .collect()
    }
}

/// The file header.
pub(crate) struct Header {
    pub count: usize,
    pub shapeless: bool,
    pub metadata: String,
}

pub(crate) fn write_header(w: &mut Writer, count: usize, shapeless: bool, metadata: &str) {
    w.str(MLX_VERSION);
    w.i32(count as i32);
    w.bool(shapeless);
    w.str(metadata);
}

pub(crate) fn read_header(r: &mut Reader) -> Result<Header> {
    r.str("version")?;
    let count = r.i32("function count")?;
    let count =
        usize::try_from(count).map_err(|_| r.error(format!("negative function count {count}")))?;
    let shapeless = r.bool("shapeless flag")?;
    let metadata = r.str("metadata")?;
    Ok(Header {
        count,
        shapeless,
        metadata,
    })
}
