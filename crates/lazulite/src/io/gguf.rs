//! GGUF (version 2 and 3), the llama.cpp format: typed key/value metadata, tensor
//! descriptions (dimensions innermost first, GGML type, offset), aligned data.

use super::{check_disjoint, lazy_array, Layout, Mapping, MetadataValue, Storage};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use half::f16;
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 4] = b"GGUF";
const DEFAULT_ALIGNMENT: u64 = 32;
/// The most dimensions a tensor may have: llama.cpp's own files use 4 (GGML_MAX_DIMS), but
/// MLX writes and reads up to 8.
const MAX_DIMS: usize = 8;
const STRING: u32 = 8;
const ARRAY: u32 = 9;

/// The GGML tensor type of each unquantized dtype GGUF can hold.
fn ggml_type(dtype: DType) -> Option<u32> {
    use DType::*;
    Some(match dtype {
        Float32 => 0,
        Float16 => 1,
        Int8 => 24,
        Int16 => 25,
        Int32 => 26,
        Int64 => 27,
        Float64 => 28,
        BFloat16 => 30,
        _ => return None,
    })
}

/// The GGUF value type of each dtype metadata numbers can have.
fn value_type(dtype: DType) -> Option<u32> {
    use DType::*;
    Some(match dtype {
        UInt8 => 0,
        Int8 => 1,
        UInt16 => 2,
        Int16 => 3,
        UInt32 => 4,
        Int32 => 5,
        Float32 => 6,
        Bool => 7,
        UInt64 => 10,
        Int64 => 11,
        Float64 => 12,
        _ => return None,
    })
}

/// A block-quantized GGML type, read as MLX's quantized triple (see [`QuantPart`]).
#[derive(Copy, Clone, Debug)]
pub(crate) enum Quant {
    Q4_0,
    Q4_1,
    Q8_0,
}

/// Which array of MLX's quantized triple a lazy GGUF tensor reads: the levels packed
/// into uint32 words (element `i` of a row in bits `bits * (i % (32 / bits))` of word
/// `i * bits / 32`, as `quantize` packs them), or one float16 scale or bias per block of
/// 32, so that `scale * level + bias` is the value ggml defines.
#[derive(Copy, Clone, Debug)]
pub(crate) enum QuantPart {
    Weights,
    Scales,
    Biases,
}

/// Elements per quantization block.
const BLOCK: usize = 32;

impl Quant {
    fn from_type(t: u32) -> Option<Quant> {
        match t {
            2 => Some(Quant::Q4_0),
            3 => Some(Quant::Q4_1),
            8 => Some(Quant::Q8_0),
            _ => None,
        }
    }

    fn block_bytes(self) -> usize {
        match self {
            Quant::Q4_0 => 2 + BLOCK / 2,
            Quant::Q4_1 => 4 + BLOCK / 2,
            Quant::Q8_0 => 2 + BLOCK,
        }
    }

    fn bits(self) -> usize {
        match self {
            Quant::Q8_0 => 8,
            Quant::Q4_0 | Quant::Q4_1 => 4,
        }
    }

    /// Packed words of whole blocks: ggml stores a 4-bit block's first 16 levels in the
    /// low nibbles and the rest in the high ones, and 8-bit levels as int8 (level - 128).
    pub(crate) fn weights(self, blocks: &[u8], out: &mut [u32]) {
        let words = BLOCK * self.bits() / 32;
        for (block, out) in blocks
            .chunks_exact(self.block_bytes())
            .zip(out.chunks_exact_mut(words))
        {
            let mut bytes = [0u8; BLOCK];
            let bytes = &mut bytes[..words * 4];
            match self {
                Quant::Q8_0 => {
                    for (b, &q) in bytes.iter_mut().zip(&block[2..]) {
                        *b = q ^ 0x80;
                    }
                }
                Quant::Q4_0 | Quant::Q4_1 => {
                    let qs = &block[block.len() - BLOCK / 2..];
                    for k in 0..BLOCK / 4 {
                        let (even, odd) = (qs[2 * k], qs[2 * k + 1]);
                        bytes[k] = (even & 0x0F) | (odd << 4);
                        bytes[BLOCK / 4 + k] = (even >> 4) | (odd & 0xF0);
                    }
                }
            }
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
    }

    /// One scale (`part` Scales) or bias (Biases) per block: ggml's `d`, and `m` (Q4_1)
    /// or `-8 d` / `-128 d` for the levels' offsets.
    pub(crate) fn scales_or_biases(self, blocks: &[u8], part: QuantPart, out: &mut [f16]) {
        let half = |b: &[u8], at: usize| f16::from_le_bytes([b[at], b[at + 1]]);
        for (block, out) in blocks.chunks_exact(self.block_bytes()).zip(out) {
            let d = half(block, 0);
            *out = match (part, self) {
                (QuantPart::Biases, Quant::Q4_1) => half(block, 2),
                (QuantPart::Biases, Quant::Q4_0) => f16::from_f32(-8.0 * d.to_f32()),
                (QuantPart::Biases, Quant::Q8_0) => f16::from_f32(-128.0 * d.to_f32()),
                _ => d,
            };
        }
    }
}

/// Saves named arrays and metadata to `path` in `.gguf` format (version 3), adding the
/// extension when missing (MLX: `save_gguf(file, arrays, metadata)`). Tensors may be
/// float32, float16, bfloat16, float64, int8, int16, int32 or int64 with at most 8
/// dimensions; metadata values are strings, lists of strings, and 0-d or 1-d arrays of
/// bool, integers, float32 or float64.
///
/// ```
/// use lazulite::{load, save_gguf, Array, Loaded, MetadataValue};
/// use std::collections::BTreeMap;
/// let path = std::env::temp_dir().join("lazulite_doc_gguf");
/// let w = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
/// let metadata = BTreeMap::from([
///     ("name".to_string(), MetadataValue::String("tiny".into())),
///     ("layers".to_string(), MetadataValue::Array(Array::scalar(2u32))),
/// ]);
/// save_gguf(&path, [("w", &w)], &metadata).unwrap();
/// let file = path.with_extension("gguf");
/// let Loaded::WithMetadata(arrays, meta) = load(&file, None, true).unwrap() else { panic!() };
/// assert_eq!(arrays["w"].shape(), &[2, 3]);
/// let MetadataValue::Array(layers) = &meta["layers"] else { panic!() };
/// assert_eq!(layers.item::<u32>().unwrap(), 2);
/// ```
pub fn save_gguf<K: AsRef<str>, V: Borrow<Array>>(
    path: impl AsRef<Path>,
    arrays: impl IntoIterator<Item = (K, V)>,
    metadata: &BTreeMap<String, MetadataValue>,
) -> Result<()> {
    let path = super::with_extension(path.as_ref(), "gguf");
    let named: Vec<(String, V)> = arrays
        .into_iter()
        .map(|(k, v)| (k.as_ref().to_string(), v))
        .collect();
    for (name, array) in &named {
        let array = array.borrow();
        if ggml_type(array.dtype()).is_none() {
            return Err(Error::value(format!(
                "[save_gguf] dtype {} is not supported",
                array.dtype()
            )));
        }
        if array.ndim() > MAX_DIMS {
            return Err(Error::value(format!(
                "[save_gguf] '{name}' has {} dimensions; GGUF allows at most {MAX_DIMS}.",
                array.ndim()
            )));
        }
    }
    let mut head = Vec::new();
    head.extend(MAGIC);
    head.extend(3u32.to_le_bytes());
    head.extend((named.len() as u64).to_le_bytes());
    head.extend((metadata.len() as u64).to_le_bytes());
    for (key, value) in metadata {
        put_string(&mut head, key);
        match value {
            MetadataValue::String(s) => {
                head.extend(STRING.to_le_bytes());
                put_string(&mut head, s);
            }
            MetadataValue::Strings(items) => {
                head.extend(ARRAY.to_le_bytes());
                head.extend(STRING.to_le_bytes());
                head.extend((items.len() as u64).to_le_bytes());
                items.iter().for_each(|s| put_string(&mut head, s));
            }
            MetadataValue::Array(a) => {
                let bad = || {
                    Error::value(format!(
                        "[save_gguf] Metadata '{key}' must be a 0-d or 1-d array of bool, \
                         integers, float32 or float64; got {} dims of {}.",
                        a.ndim(),
                        a.dtype()
                    ))
                };
                let t = value_type(a.dtype()).ok_or_else(bad)?;
                let tensor = super::evaluated(&[a])?.remove(0);
                match a.ndim() {
                    0 => head.extend(t.to_le_bytes()),
                    1 => {
                        head.extend(ARRAY.to_le_bytes());
                        head.extend(t.to_le_bytes());
                        head.extend((a.size() as u64).to_le_bytes());
                    }
                    _ => return Err(bad()),
                }
                head.extend(super::le_bytes(&tensor).iter());
            }
        }
    }
    let refs: Vec<&Array> = named.iter().map(|(_, v)| v.borrow()).collect();
    let tensors = super::evaluated(&refs)?;
    let mut offset = 0u64;
    let mut offsets = Vec::new();
    for ((name, _), t) in named.iter().zip(&tensors) {
        put_string(&mut head, name);
        head.extend((t.ndim() as u32).to_le_bytes());
        for &d in t.shape.iter().rev() {
            head.extend((d as u64).to_le_bytes());
        }
        head.extend(ggml_type(t.dtype).expect("checked above").to_le_bytes());
        head.extend(offset.to_le_bytes());
        offsets.push(offset);
        offset = align_up(
            offset + (t.size() * t.dtype.size()) as u64,
            DEFAULT_ALIGNMENT,
        );
    }
    head.resize(align_up(head.len() as u64, DEFAULT_ALIGNMENT) as usize, 0);
    super::write_atomic(&path, |w| {
        super::put(w, &path, &head)?;
        let mut at = 0u64;
        for (t, &start) in tensors.iter().zip(&offsets) {
            super::put(w, &path, &vec![0u8; (start - at) as usize])?;
            let bytes = super::le_bytes(t);
            super::put(w, &path, &bytes)?;
            at = start + bytes.len() as u64;
        }
        Ok(())
    })
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

fn align_up(n: u64, alignment: u64) -> u64 {
    n.div_ceil(alignment) * alignment
}

/// A bounds-checked reader over the file's bytes.
struct Reader<'a> {
    file: &'a Mapping,
    bytes: &'a [u8],
    pos: usize,
}

const OP: &str = "load_gguf";

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8]> {
        let range = self.file.range(OP, what, self.pos as u64, n)?;
        self.pos = range.end;
        Ok(&self.bytes[range])
    }

    fn remaining(&self) -> u64 {
        (self.bytes.len() - self.pos) as u64
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// A count of items each at least `min_bytes` long, checked against the bytes left.
    fn count(&mut self, what: &str, min_bytes: u64) -> Result<usize> {
        let n = self.u64(what)?;
        if n.saturating_mul(min_bytes) > self.remaining() {
            return Err(self.file.error(
                OP,
                format!(
                    "{what} {n} is more than the {} bytes left can hold.",
                    self.remaining()
                ),
            ));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let n = self.u64(what)?;
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| self.file.error(OP, format!("{what} is not UTF-8.")))
    }

    /// Reads a metadata value of GGUF type `t`: kept (as MetadataValue) when `keep`,
    /// else only skipped. `depth` bounds nested arrays.
    fn value(
        &mut self,
        key: &str,
        t: u32,
        keep: bool,
        depth: usize,
    ) -> Result<Option<MetadataValue>> {
        let bad = |m: &str| self.file.error(OP, format!("metadata '{key}': {m}"));
        if t == STRING {
            let s = self.string(key)?;
            return Ok(keep.then_some(MetadataValue::String(s)));
        }
        if t == ARRAY {
            if depth > 8 {
                return Err(bad("arrays nested too deeply."));
            }
            let item = self.u32(key)?;
            let min = match item {
                STRING => 8,
                ARRAY => 12,
                t => scalar_dtype(t).map_or(1, |d| d.size() as u64),
            };
            let n = self.count(key, min)?;
            if item == STRING {
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.string(key)?);
                }
                return Ok(keep.then_some(MetadataValue::Strings(items)));
            }
            if item == ARRAY {
                if keep {
                    return Err(bad("arrays of arrays are not supported."));
                }
                for _ in 0..n {
                    self.value(key, ARRAY, false, depth + 1)?;
                }
                return Ok(None);
            }
            let dtype =
                scalar_dtype(item).ok_or_else(|| bad(&format!("unknown value type {item}.")))?;
            let bytes = self.take(n as u64 * dtype.size() as u64, key)?;
            return keep.then(|| metadata_array(bytes, &[n], dtype)).transpose();
        }
        let dtype = scalar_dtype(t).ok_or_else(|| bad(&format!("unknown value type {t}.")))?;
        let bytes = self.take(dtype.size() as u64, key)?;
        keep.then(|| metadata_array(bytes, &[], dtype)).transpose()
    }
}

fn scalar_dtype(t: u32) -> Option<DType> {
    DType::ALL.into_iter().find(|&d| value_type(d) == Some(t))
}

fn metadata_array(bytes: &[u8], shape: &[usize], dtype: DType) -> Result<MetadataValue> {
    let mut owned = bytes.to_vec();
    super::fix_elements(&mut owned, dtype, cfg!(target_endian = "big"));
    Array::from_bytes(&owned, shape, dtype).map(MetadataValue::Array)
}

type Arrays = BTreeMap<String, Array>;
type Metadata = BTreeMap<String, MetadataValue>;

/// The arrays (and, when asked, metadata) of a `.gguf` file.
pub(crate) fn load(file: &Arc<Mapping>, return_metadata: bool) -> Result<(Arrays, Metadata)> {
    let mut r = Reader {
        file,
        bytes: file.bytes(0..file.len()),
        pos: 0,
    };
    if r.take(4, "magic")? != MAGIC {
        return Err(file.error(OP, "not a GGUF file (bad magic)."));
    }
    let version = r.u32("version")?;
    if !(2..=3).contains(&version) {
        return Err(file.error(OP, format!("unsupported GGUF version {version}.")));
    }
    // Smallest tensor description: name length, dims count, type, offset.
    let n_tensors = r.u64("tensor count")?;
    let n_kv = r.count("metadata count", 13)?;
    let mut metadata = BTreeMap::new();
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..n_kv {
        let key = r.string("metadata key")?;
        let t = r.u32(&key)?;
        if key == "general.alignment" {
            let value = match r.value(&key, t, true, 0)? {
                Some(MetadataValue::Array(a)) if t == 4 => a.item::<u64>()?,
                _ => return Err(file.error(OP, "general.alignment must be a uint32.")),
            };
            if value == 0 || !value.is_power_of_two() {
                return Err(file.error(OP, format!("alignment {value} is not a power of two.")));
            }
            alignment = value;
            if return_metadata {
                metadata.insert(key, MetadataValue::Array(Array::scalar(value as u32)));
            }
            continue;
        }
        if let Some(v) = r.value(&key, t, return_metadata, 0)? {
            metadata.insert(key, v);
        }
    }
    if n_tensors.saturating_mul(24) > r.remaining() {
        return Err(file.error(
            OP,
            format!("tensor count {n_tensors} does not fit the file."),
        ));
    }
    let mut infos = Vec::new();
    for _ in 0..n_tensors {
        let name = r.string("tensor name")?;
        let n_dims = r.u32(&name)? as usize;
        if n_dims > MAX_DIMS {
            return Err(file.error(
                OP,
                format!("'{name}' has {n_dims} dimensions (max {MAX_DIMS})."),
            ));
        }
        let mut dims = Vec::with_capacity(n_dims);
        for _ in 0..n_dims {
            let d = r.u64(&name)?;
            dims.push(
                usize::try_from(d)
                    .map_err(|_| file.error(OP, format!("'{name}': dimension {d} too large.")))?,
            );
        }
        let t = r.u32(&name)?;
        let offset = r.u64(&name)?;
        infos.push((name, dims, t, offset));
    }
    let data_start = align_up(r.pos as u64, alignment);
    let mut arrays = BTreeMap::new();
    let mut ranges = Vec::new();
    for (name, dims, t, offset) in infos {
        let bad = |m: String| file.error(OP, format!("'{name}': {m}"));
        let shape: Vec<usize> = dims.iter().rev().copied().collect();
        let quant = Quant::from_type(t);
        let start = |bytes: u64| -> Result<std::ops::Range<usize>> {
            let start = data_start
                .checked_add(offset)
                .ok_or_else(|| bad(format!("offset {offset} is too large.")))?;
            file.range(OP, &name, start, bytes)
        };
        let mut insert = |name: String, array: Array| {
            if arrays.insert(name.clone(), array).is_some() {
                return Err(file.error(OP, format!("'{name}': the name appears twice.")));
            }
            Ok(())
        };
        let Some(quant) = quant else {
            let dtype = DType::ALL
                .into_iter()
                .find(|&d| ggml_type(d) == Some(t))
                .ok_or_else(|| bad(format!("unsupported GGML tensor type {t}.")))?;
            let range = start(super::byte_size(file, OP, &shape, dtype)?)?;
            ranges.push((range.clone(), name.clone()));
            let storage = Storage::Raw(range);
            let array = lazy_array(file, &name, storage, Layout::little_endian(), shape, dtype);
            insert(name, array)?;
            continue;
        };
        if dims.first().is_none_or(|d| d % BLOCK != 0) {
            return Err(bad(format!(
                "{quant:?} needs an innermost dimension that is a multiple of {BLOCK}; \
                 dims are {dims:?}."
            )));
        }
        let n = super::byte_size(file, OP, &shape, DType::Float32)? / 4;
        let range = start(n / BLOCK as u64 * quant.block_bytes() as u64)?;
        ranges.push((range.clone(), name.clone()));
        // MLX's names: the scales and biases of `x.weight` are `x.scales` and `x.biases`
        // (MLX drops the last seven characters whatever they are).
        let prefix = name
            .char_indices()
            .rev()
            .nth(6)
            .map_or(name.as_str(), |(at, _)| &name[..at]);
        let last = shape.len() - 1;
        let mut words = shape.clone();
        words[last] = words[last] * quant.bits() / 32;
        let mut blocks = shape.clone();
        blocks[last] /= BLOCK;
        for (part, part_name, part_shape, dtype) in [
            (
                QuantPart::Scales,
                format!("{prefix}.scales"),
                blocks.clone(),
                DType::Float16,
            ),
            (
                QuantPart::Biases,
                format!("{prefix}.biases"),
                blocks,
                DType::Float16,
            ),
            (QuantPart::Weights, name.clone(), words, DType::UInt32),
        ] {
            let storage = Storage::Quantized(range.clone(), quant, part);
            let layout = Layout::little_endian();
            insert(
                part_name,
                lazy_array(file, &name, storage, layout, part_shape, dtype),
            )?;
        }
    }
    check_disjoint(file, OP, ranges)?;
    Ok((arrays, metadata))
}
