//! Saving and loading arrays: `.npy`, `.npz`, `.safetensors` and `.gguf`, as `mlx.core`.
//!
//! Loading is lazy: [`load`] memory-maps the file, checks its headers and returns arrays
//! that read their bytes only when evaluated. An aligned little-endian tensor becomes an
//! array over the mapped pages themselves (no copy; pages are read from disk when first
//! touched), so using one tensor of a large file reads only that tensor. The mapping is
//! private (copy-on-write): results computed in place never reach the file. Mapped
//! memory is not counted by [`get_active_memory`](crate::get_active_memory). As with any
//! memory-mapped file, another program truncating the file while its arrays live is
//! undefined; replacing it (as lazulite's own saves do, by renaming a new file over it)
//! is safe.
//!
//! Saving evaluates the arrays and writes atomically: a temporary file in the same
//! directory, renamed over the target when complete.
//!
//! Malformed files (truncated, wrong magic, sizes or offsets past the end, overlapping
//! tensors, shapes whose size overflows, unknown dtypes) give an [`ErrorKind::Io`] error
//! naming the file and the problem, a missing file [`ErrorKind::NotFound`]; nothing is
//! allocated beyond what the file's bytes can fill.

mod gguf;
mod json;
mod npy;
mod npz;
mod safetensors;

pub use gguf::save_gguf;
pub use npy::save;
pub use npz::{savez, savez_compressed};
pub use safetensors::save_safetensors;

use crate::array::Array;
use crate::backend::buffer::Buffer;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::primitive::{no_rule, OutputSpec, Primitive};
use half::f16;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A metadata value of a `.safetensors` (always a string) or `.gguf` file, as MLX gives
/// them: a string, a list of strings, or a 0-d / 1-d array for GGUF numbers and number
/// lists (bool, the integer types, float32 and float64).
///
/// ```
/// use lazulite::{load, save_gguf, Array, Loaded, MetadataValue};
/// use std::collections::BTreeMap;
/// let path = std::env::temp_dir().join("lazulite_doc_metadata_value.gguf");
/// let metadata = BTreeMap::from([
///     ("tags".to_string(), MetadataValue::Strings(vec!["a".into(), "b".into()])),
///     ("eps".to_string(), MetadataValue::Array(Array::scalar(1e-5f32))),
/// ]);
/// save_gguf(&path, [("w", Array::scalar(1.0f32))], &metadata)?;
/// let Loaded::WithMetadata(_, meta) = load(&path, None, true)? else { unreachable!() };
/// assert!(matches!(&meta["tags"], MetadataValue::Strings(s) if s == &["a", "b"]));
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum MetadataValue {
    /// A string value.
    String(String),
    /// A list of strings.
    Strings(Vec<String>),
    /// A number (0-d array) or a list of numbers (1-d array).
    Array(Array),
}

/// What [`load`] returns: one array for `.npy`, a map of names to arrays otherwise, and
/// the file's metadata too when asked for.
///
/// ```
/// use lazulite::{load, savez, Array, Loaded};
/// let path = std::env::temp_dir().join("lazulite_doc_loaded.npz");
/// savez(&path, &[], [("weights", Array::from_slice(&[1i32, 2], &[2])?)])?;
/// match load(&path, None, false)? {
///     Loaded::Arrays(arrays) => assert_eq!(arrays["weights"].to_vec::<i32>()?, vec![1, 2]),
///     other => panic!("a map of arrays, not {other:?}"),
/// }
/// # Ok::<(), lazulite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum Loaded {
    /// The one array of a `.npy` file.
    Array(Array),
    /// The named arrays of a `.npz`, `.safetensors` or `.gguf` file.
    Arrays(BTreeMap<String, Array>),
    /// Named arrays and the file's metadata (with `return_metadata`).
    WithMetadata(BTreeMap<String, Array>, BTreeMap<String, MetadataValue>),
}

impl Loaded {
    /// The single array of a `.npy` file; an error for the other forms.
    ///
    /// ```
    /// let path = std::env::temp_dir().join("lazulite_doc_into_array.npy");
    /// lazulite::save(&path, &lazulite::Array::from_slice(&[1.0f32], &[1]).unwrap()).unwrap();
    /// let a = lazulite::load(&path, None, false).unwrap().into_array().unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0]);
    /// ```
    pub fn into_array(self) -> Result<Array> {
        match self {
            Loaded::Array(a) => Ok(a),
            _ => Err(Error::value(
                "[load] The file holds several arrays, not one.",
            )),
        }
    }

    /// The map of names to arrays (without metadata); an error for a `.npy` file.
    ///
    /// ```
    /// use lazulite::Array;
    /// let path = std::env::temp_dir().join("lazulite_doc_into_arrays.npz");
    /// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
    /// lazulite::savez(&path, &[&a], [("b", &a)]).unwrap();
    /// let arrays = lazulite::load(&path, None, false).unwrap().into_arrays().unwrap();
    /// assert_eq!(arrays.keys().collect::<Vec<_>>(), ["arr_0", "b"]);
    /// ```
    pub fn into_arrays(self) -> Result<BTreeMap<String, Array>> {
        match self {
            Loaded::Arrays(m) | Loaded::WithMetadata(m, _) => Ok(m),
            Loaded::Array(_) => Err(Error::value("[load] The file holds one array, not a map.")),
        }
    }
}

/// Loads the array(s) of a `.npy`, `.npz`, `.safetensors` or `.gguf` file, lazily: the
/// file is memory-mapped, its headers are checked now, and each array reads its bytes
/// when evaluated. The format comes from the extension unless `format` names
/// it (`"npy"`, `"npz"`, `"safetensors"`, `"gguf"`). `return_metadata` asks for the
/// metadata of `.safetensors` and `.gguf` files (an error for the NumPy formats, as in
/// MLX). A GGUF tensor quantized as Q4_0, Q4_1 or Q8_0 loads as MLX loads it: `name`
/// holds the levels packed into uint32 words and `prefix.scales` / `prefix.biases`
/// (`prefix` is `name` without its last seven characters, `.weight`) one float16 scale and
/// bias per 32 values, ready for [`quantized_matmul`](crate::quantized_matmul) with group
/// size 32 and 4 or 8 bits; [`dequantize`](crate::dequantize) gives the values.
///
/// ```
/// use lazulite::{load, save, Array, Loaded};
/// let path = std::env::temp_dir().join("lazulite_doc_load");
/// save(&path, &Array::from_slice(&[1.0f32], &[1]).unwrap()).unwrap(); // adds ".npy"
/// let Loaded::Array(a) = load(path.with_extension("npy"), None, false).unwrap() else {
///     unreachable!()
/// };
/// assert!(!a.is_evaluated()); // read when used
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0]);
/// ```
pub fn load(path: impl AsRef<Path>, format: Option<&str>, return_metadata: bool) -> Result<Loaded> {
    let path = path.as_ref();
    let format = match format {
        Some(f) => f.to_string(),
        None => path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_string)
            .ok_or_else(|| Error::value("[load] Could not infer file format from extension"))?,
    };
    check_format(&format, return_metadata)?;
    let file = Mapping::open(path)?;
    load_mapping(&file, &format, return_metadata)
}

/// As [`load`], from the bytes of a file already read into memory (a Python file object,
/// a network buffer); `format` is required. The arrays keep `bytes` alive and read from
/// them when evaluated.
///
/// ```
/// use lazulite::{load, load_bytes, save, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_load_bytes.npy");
/// save(&path, &Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()).unwrap();
/// let bytes = std::fs::read(&path).unwrap();
/// let a = load_bytes(bytes, "npy", false).unwrap().into_array().unwrap();
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
/// assert!(load_bytes(b"junk".to_vec(), "npy", false).is_err());
/// ```
pub fn load_bytes(bytes: Vec<u8>, format: &str, return_metadata: bool) -> Result<Loaded> {
    check_format(format, return_metadata)?;
    load_mapping(&Mapping::owned(bytes), format, return_metadata)
}

fn check_format(format: &str, return_metadata: bool) -> Result<()> {
    if !["npy", "npz", "safetensors", "gguf"].contains(&format) {
        return Err(Error::value(format!("[load] Unknown file format {format}")));
    }
    if return_metadata && (format == "npy" || format == "npz") {
        return Err(Error::value(format!(
            "[load] metadata not supported for format {format}"
        )));
    }
    Ok(())
}

fn load_mapping(file: &Arc<Mapping>, format: &str, return_metadata: bool) -> Result<Loaded> {
    match format {
        "npy" => npy::load(file).map(Loaded::Array),
        "npz" => npz::load(file).map(Loaded::Arrays),
        "safetensors" => {
            let (arrays, metadata) = safetensors::load(file)?;
            Ok(with_metadata(arrays, metadata, return_metadata))
        }
        _ => {
            let (arrays, metadata) = gguf::load(file, return_metadata)?;
            Ok(with_metadata(arrays, metadata, return_metadata))
        }
    }
}

fn with_metadata(
    arrays: BTreeMap<String, Array>,
    metadata: BTreeMap<String, MetadataValue>,
    return_metadata: bool,
) -> Loaded {
    if return_metadata {
        Loaded::WithMetadata(arrays, metadata)
    } else {
        Loaded::Arrays(arrays)
    }
}

/// A read-only view of a whole file, mapped privately: writes through it (in-place
/// results over loaded arrays) stay in memory and never reach the file.
pub(crate) struct Mapping {
    _backing: Backing,
    ptr: NonNull<u8>,
    len: usize,
    path: PathBuf,
}

// SAFETY: the mapping is plain memory owned by this value; see `Buffer`.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

/// What holds a [`Mapping`]'s bytes.
enum Backing {
    Empty,
    Map {
        _map: memmap2::MmapMut,
    },
    /// Read into memory by the caller; u64 words so that the bytes are 8-byte aligned
    /// and tensors can be used in place.
    Owned {
        _words: Vec<u64>,
    },
}

impl Mapping {
    /// A file's bytes already in memory, copied into 8-byte aligned storage.
    pub(crate) fn owned(bytes: Vec<u8>) -> Arc<Mapping> {
        let len = bytes.len();
        let mut words = vec![0u64; len.div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..len].copy_from_slice(&bytes);
        let ptr = NonNull::new(words.as_mut_ptr() as *mut u8).expect("a Vec is never null");
        Arc::new(Mapping {
            _backing: Backing::Owned { _words: words },
            ptr,
            len,
            path: PathBuf::from("<bytes>"),
        })
    }

    pub(crate) fn open(path: &Path) -> Result<Arc<Mapping>> {
        let file = File::open(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorKind::NotFound
            } else {
                ErrorKind::Io
            };
            Error::new(
                kind,
                format!("[load] Failed to open file {}: {e}", path.display()),
            )
        })?;
        let len = file.metadata()?.len();
        let len = usize::try_from(len)
            .map_err(|_| Error::new(ErrorKind::Io, "[load] File too large to map."))?;
        let path = path.to_path_buf();
        if len == 0 {
            return Ok(Arc::new(Mapping {
                _backing: Backing::Empty,
                ptr: NonNull::dangling(),
                len,
                path,
            }));
        }
        // SAFETY: a private mapping; the module docs state the truncation caveat.
        let mut map =
            unsafe { memmap2::MmapOptions::new().len(len).map_copy(&file) }.map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("[load] Cannot map {}: {e}", path.display()),
                )
            })?;
        let ptr = NonNull::new(map.as_mut_ptr()).expect("a mapping is never null");
        Ok(Arc::new(Mapping {
            _backing: Backing::Map { _map: map },
            ptr,
            len,
            path,
        }))
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes in `range`, which the caller has checked lies inside the file. Only the
    /// range is borrowed, so arrays over other ranges may be written meanwhile.
    pub(crate) fn bytes(&self, range: Range<usize>) -> &[u8] {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds (checked above); the mapping lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(range.start), range.len()) }
    }

    /// An error naming this file, from the reader `op` (e.g. `load_npy`).
    pub(crate) fn error(&self, op: &str, message: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorKind::Io,
            format!("[{op}] {}: {message}", self.path.display()),
        )
    }

    /// `offset + len` as a range inside the file, or an error saying what does not fit.
    pub(crate) fn range(
        &self,
        op: &str,
        what: &str,
        offset: u64,
        len: u64,
    ) -> Result<Range<usize>> {
        let end = offset.checked_add(len);
        match end {
            Some(end) if end <= self.len as u64 => Ok(offset as usize..end as usize),
            _ => Err(self.error(
                op,
                format!(
                    "{what} needs bytes {offset}..{} but the file has {} bytes (truncated or \
                     corrupt).",
                    offset as u128 + len as u128,
                    self.len
                ),
            )),
        }
    }
}

/// Rejects overlapping byte ranges of different tensors (each array must own its bytes).
pub(crate) fn check_disjoint(
    file: &Mapping,
    op: &str,
    mut ranges: Vec<(Range<usize>, String)>,
) -> Result<()> {
    ranges.retain(|(r, _)| !r.is_empty());
    ranges.sort_by_key(|(r, _)| (r.start, r.end));
    for pair in ranges.windows(2) {
        if pair[1].0.start < pair[0].0.end {
            return Err(file.error(
                op,
                format!(
                    "tensors '{}' and '{}' overlap (bytes {:?} and {:?}).",
                    pair[0].1, pair[1].1, pair[0].0, pair[1].0
                ),
            ));
        }
    }
    Ok(())
}

/// Bytes of `count` elements of `dtype`, or an error if that overflows.
pub(crate) fn byte_size(file: &Mapping, op: &str, shape: &[usize], dtype: DType) -> Result<u64> {
    crate::shape::checked_size(shape)
        .ok()
        .and_then(|n| n.checked_mul(dtype.size()))
        .map(|b| b as u64)
        .ok_or_else(|| file.error(op, format!("shape {shape:?} is too large.")))
}

/// How a tensor's bytes are stored in the file.
pub(crate) enum Storage {
    /// The elements themselves, in `range`.
    Raw(Range<usize>),
    /// A raw deflate stream in `range` that inflates to `skip` bytes (an npy header),
    /// then the elements; `crc` is the zip CRC-32 of everything it inflates to.
    Deflated {
        range: Range<usize>,
        skip: usize,
        crc: u32,
    },
    /// GGML blocks in `range`, read as one array of MLX's quantized triple.
    Quantized(Range<usize>, gguf::Quant, gguf::QuantPart),
}

/// Element order in the file, besides the dtype.
#[derive(Copy, Clone)]
pub(crate) struct Layout {
    /// Elements are in the other byte order than this machine's.
    pub swap: bool,
    /// Column-major (NumPy `fortran_order`).
    pub fortran: bool,
}

impl Layout {
    /// Row-major little-endian elements (safetensors, GGUF).
    pub(crate) fn little_endian() -> Layout {
        Layout {
            swap: cfg!(target_endian = "big"),
            fortran: false,
        }
    }
}

/// The node that reads one tensor of a mapped file when evaluated.
struct Load {
    file: Arc<Mapping>,
    name: String,
    storage: Storage,
    layout: Layout,
}

/// A lazy array reading `storage` of `file` when evaluated.
pub(crate) fn lazy_array(
    file: &Arc<Mapping>,
    name: &str,
    storage: Storage,
    layout: Layout,
    shape: Vec<usize>,
    dtype: DType,
) -> Array {
    let load = Load {
        file: file.clone(),
        name: name.to_string(),
        storage,
        layout,
    };
    Array::from_op(load, vec![], shape, dtype)
}

impl Primitive for Load {
    fn name(&self) -> &'static str {
        "load"
    }

    fn params(&self) -> String {
        format!("{}:{}", self.file.path.display(), self.name)
    }

    fn eval(&self, _: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let spec = &outputs[0];
        let mut tensor = match &self.storage {
            Storage::Raw(range) => self.raw(range.clone(), spec)?,
            Storage::Deflated { range, skip, crc } => {
                self.inflate(range.clone(), *skip, *crc, spec)?
            }
            Storage::Quantized(range, quant, part) => {
                let mut t = Tensor::uninit(spec.dtype, &spec.shape)?;
                let blocks = self.file.bytes(range.clone());
                match part {
                    gguf::QuantPart::Weights => quant.weights(blocks, t.slice_mut::<u32>()),
                    _ => quant.scales_or_biases(blocks, *part, t.slice_mut::<f16>()),
                }
                t
            }
        };
        if self.layout.fortran {
            let mut acc = 1isize;
            for (s, &d) in tensor.strides.iter_mut().zip(&spec.shape) {
                *s = acc;
                acc *= d.max(1) as isize;
            }
        }
        Ok(vec![tensor])
    }

    // A source (no inputs): no transform has anything to differentiate or batch through it.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }

    fn vmap(&self, _: &[Array], _: &[Option<usize>]) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        Err(no_rule("vmap", self.name()))
    }
}

impl Load {
    /// The mapped bytes themselves when they can serve as the array as they are, else a
    /// converted copy.
    fn raw(&self, range: Range<usize>, spec: &OutputSpec) -> Result<Tensor> {
        let bytes = self.file.bytes(range.clone());
        let aligned = (bytes.as_ptr() as usize).is_multiple_of(spec.dtype.size());
        let valid_bools = spec.dtype != DType::Bool || bytes.iter().all(|&b| b <= 1);
        if !self.layout.swap && aligned && valid_bools && !bytes.is_empty() {
            let ptr = NonNull::new(bytes.as_ptr() as *mut u8).expect("mapped bytes");
            // SAFETY: `range` lies in the mapping kept alive by the owner; aligned for the
            // dtype (checked); no other array maps these bytes (`check_disjoint`).
            let buf = unsafe { Buffer::external(ptr, bytes.len(), Box::new(self.file.clone())) };
            return Ok(Tensor {
                buf: Arc::new(buf),
                dtype: spec.dtype,
                shape: spec.shape.clone(),
                strides: crate::backend::contiguous_strides(&spec.shape),
                offset: 0,
            });
        }
        let mut t = Tensor::uninit(spec.dtype, &spec.shape)?;
        let out = Arc::get_mut(&mut t.buf).expect("a new buffer is not shared");
        let out = &mut out.bytes_mut()[..bytes.len()];
        out.copy_from_slice(bytes);
        fix_elements(out, spec.dtype, self.layout.swap);
        Ok(t)
    }

    fn inflate(
        &self,
        range: Range<usize>,
        skip: usize,
        crc: u32,
        spec: &OutputSpec,
    ) -> Result<Tensor> {
        let mut t = Tensor::uninit(spec.dtype, &spec.shape)?;
        let n = t.size() * spec.dtype.size();
        let mut reader = npz::Inflater::new(self.file.bytes(range));
        let bad = |e: std::io::Error| self.file.error("load_npz", format!("'{}': {e}", self.name));
        reader.skip(skip).map_err(bad)?;
        let out = Arc::get_mut(&mut t.buf).expect("a new buffer is not shared");
        let out = &mut out.bytes_mut()[..n];
        reader.read_exact(out).map_err(bad)?;
        reader.finish(crc).map_err(bad)?;
        fix_elements(out, spec.dtype, self.layout.swap);
        Ok(t)
    }
}

/// Puts elements read from a file into this machine's form: byte order, and bools as 0/1.
fn fix_elements(bytes: &mut [u8], dtype: DType, swap: bool) {
    if swap {
        // A complex number is two floats, each in the file's byte order.
        let width = if dtype == DType::Complex64 {
            4
        } else {
            dtype.size()
        };
        bytes.chunks_exact_mut(width).for_each(<[u8]>::reverse);
    }
    if dtype == DType::Bool {
        bytes.iter_mut().for_each(|b| *b = (*b != 0) as u8);
    }
}

/// `path` with `extension` appended unless it already ends with it (`"a"` -> `"a.npy"`,
/// `"a.bin"` -> `"a.bin.npy"`, as MLX).
pub(crate) fn with_extension(path: &Path, extension: &str) -> PathBuf {
    if path.extension().and_then(|e| e.to_str()) == Some(extension) {
        return path.to_path_buf();
    }
    let mut name = path.as_os_str().to_os_string();
    name.push(".");
    name.push(extension);
    PathBuf::from(name)
}

/// The evaluated, row-major, little-endian bytes of each array.
pub(crate) fn evaluated(arrays: &[&Array]) -> Result<Vec<Tensor>> {
    crate::eval::eval(arrays)?;
    arrays
        .iter()
        .map(|a| crate::backend::cpu::copy::contiguous(a.tensor()?))
        .collect()
}

/// The bytes of a contiguous tensor, little-endian.
pub(crate) fn le_bytes(t: &Tensor) -> std::borrow::Cow<'_, [u8]> {
    let n = t.size() * t.dtype.size();
    let bytes = if n == 0 {
        &[][..]
    } else {
        &t.buf.bytes()[t.offset * t.dtype.size()..][..n]
    };
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(bytes)
    } else {
        let mut owned = bytes.to_vec();
        fix_elements(&mut owned, t.dtype, true);
        std::borrow::Cow::Owned(owned)
    }
}

/// Writes `path` atomically: `write` fills a temporary file in the same directory, which
/// is then renamed over `path`. On any error the temporary file is removed and `path` is
/// left as it was.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| Error::value(format!("[save] {} is not a file name.", path.display())))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let temp = path.with_file_name(temp_name);
    let result = (|| {
        let file = File::create(&temp).map_err(|e| save_error(path, e))?;
        let mut writer = BufWriter::new(file);
        write(&mut writer)?;
        let file = writer
            .into_inner()
            .map_err(|e| save_error(path, e.into_error()))?;
        file.sync_all().map_err(|e| save_error(path, e))?;
        std::fs::rename(&temp, path).map_err(|e| save_error(path, e))
    })();
    if result.is_err() {
        // Best effort: the temporary file may never have been created.
        let _ = std::fs::remove_file(&temp);
    }
    result
}

pub(crate) fn save_error(path: &Path, e: std::io::Error) -> Error {
    let kind = if e.kind() == std::io::ErrorKind::NotFound {
        ErrorKind::NotFound
    } else {
        ErrorKind::Io
    };
    Error::new(
        kind,
        format!("[save] Failed to write {}: {e}", path.display()),
    )
}

/// `write_all` with lazulite's error for `path`.
pub(crate) fn put(w: &mut impl Write, path: &Path, bytes: &[u8]) -> Result<()> {
    w.write_all(bytes).map_err(|e| save_error(path, e))
}
