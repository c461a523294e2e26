//! NumPy's `.npz` archives: a zip file of `.npy` entries, stored or deflated.

use super::npy;
use super::{check_disjoint, lazy_array, Mapping, Storage};
use crate::array::Array;
use crate::error::{Error, Result};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

/// Most bytes one byte of a deflate stream can inflate to (a deflate limit), used to
/// refuse headers promising more data than their stream could hold.
const MAX_INFLATION: u64 = 1032;

/// Saves arrays to `path` in uncompressed `.npz` format, adding the `.npz` extension when
/// missing (MLX: `savez(file, *args, **kwargs)`). `positional` arrays are named `arr_0`,
/// `arr_1`, ...; `named` ones keep their names, which must differ from those.
///
/// ```
/// use lazulite::{load, savez, Array};
/// let path = std::env::temp_dir().join("lazulite_doc_savez");
/// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
/// let b = Array::from_slice(&[2.0f32], &[1]).unwrap();
/// savez(&path, &[&a], [("b", &b)]).unwrap();
/// let arrays = load(path.with_extension("npz"), None, false).unwrap().into_arrays().unwrap();
/// assert_eq!(arrays["arr_0"].to_vec::<f32>().unwrap(), vec![1.0]);
/// assert_eq!(arrays["b"].to_vec::<f32>().unwrap(), vec![2.0]);
/// ```
pub fn savez<K: AsRef<str>, V: Borrow<Array>>(
    path: impl AsRef<Path>,
    positional: &[&Array],
    named: impl IntoIterator<Item = (K, V)>,
) -> Result<()> {
    write_npz(path.as_ref(), positional, named, CompressionMethod::Stored)
}

/// As [`savez`], with every entry deflate-compressed (MLX: `savez_compressed`).
///
/// ```
/// use lazulite::{load, savez_compressed, zeros, DType};
/// let path = std::env::temp_dir().join("lazulite_doc_savez_compressed.npz");
/// let z = zeros(&[1000], DType::Float32).unwrap();
/// savez_compressed(&path, &[], [("z", &z)]).unwrap();
/// assert!(std::fs::metadata(&path).unwrap().len() < 1000);
/// let arrays = load(&path, None, false).unwrap().into_arrays().unwrap();
/// assert_eq!(arrays["z"].shape(), &[1000]);
/// ```
pub fn savez_compressed<K: AsRef<str>, V: Borrow<Array>>(
    path: impl AsRef<Path>,
    positional: &[&Array],
    named: impl IntoIterator<Item = (K, V)>,
) -> Result<()> {
    write_npz(
        path.as_ref(),
        positional,
        named,
        CompressionMethod::Deflated,
    )
}

fn write_npz<K: AsRef<str>, V: Borrow<Array>>(
    path: &Path,
    positional: &[&Array],
    named: impl IntoIterator<Item = (K, V)>,
    method: CompressionMethod,
) -> Result<()> {
    let path = super::with_extension(path, "npz");
    let named: Vec<(String, V)> = named
        .into_iter()
        .map(|(k, v)| (k.as_ref().to_string(), v))
        .collect();
    let mut names: Vec<String> = (0..positional.len()).map(|i| format!("arr_{i}")).collect();
    for (name, _) in &named {
        if names.contains(name) {
            return Err(Error::value(format!(
                "[savez] Cannot use un-named variables and keyword {name}"
            )));
        }
        names.push(name.clone());
    }
    let arrays: Vec<&Array> = positional
        .iter()
        .copied()
        .chain(named.iter().map(|(_, v)| v.borrow()))
        .collect();
    let tensors = super::evaluated(&arrays)?;
    let zip_error = |e: zip::result::ZipError| {
        Error::new(
            crate::error::ErrorKind::Io,
            format!("[savez] Failed to write {}: {e}", path.display()),
        )
    };
    super::write_atomic(&path, |w| {
        let mut zip = zip::ZipWriter::new(w);
        for (name, tensor) in names.iter().zip(&tensors) {
            let header = npy::header(tensor.dtype, &tensor.shape)?;
            let data = super::le_bytes(tensor);
            let options = SimpleFileOptions::default()
                .compression_method(method)
                .large_file((header.len() + data.len()) as u64 >= u32::MAX as u64 / 2);
            zip.start_file(format!("{name}.npy"), options)
                .map_err(zip_error)?;
            super::put(&mut zip, &path, &header)?;
            super::put(&mut zip, &path, &data)?;
        }
        zip.finish()
            .map_err(zip_error)?
            .flush()
            .map_err(|e| super::save_error(&path, e))
    })
}

/// The arrays of a `.npz` file, named as NumPy names them (entry names less `.npy`).
pub(crate) fn load(file: &Arc<Mapping>) -> Result<BTreeMap<String, Array>> {
    let op = "load_npz";
    let bytes = file.bytes(0..file.len());
    let zip_error = |e: zip::result::ZipError| file.error(op, format!("bad zip archive: {e}"));
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
    let mut arrays = BTreeMap::new();
    let mut ranges = Vec::new();
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(zip_error)?;
        let name = entry.name().map_err(zip_error)?.to_string();
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        if entry.encrypted() {
            return Err(file.error(op, format!("'{name}' is encrypted.")));
        }
        let start = entry
            .data_start()
            .ok_or_else(|| file.error(op, format!("'{name}' has no data.")))?;
        let range = file.range(op, &name, start, entry.compressed_size())?;
        let (method, size, crc) = (entry.compression(), entry.size(), entry.crc32());
        drop(entry);
        let bad = |m: String| file.error(op, format!("'{name}': {m}"));
        let array = match method {
            CompressionMethod::Stored => {
                if size != range.len() as u64 {
                    return Err(bad(format!(
                        "stored entry of {} bytes claims {size} bytes uncompressed.",
                        range.len()
                    )));
                }
                let header = npy::parse_header(file.bytes(range.clone())).map_err(bad)?;
                let start = range.start as u64;
                npy::load_at(file, op, &key, start, size, header)?
            }
            CompressionMethod::Deflated => deflated(file, op, &key, range.clone(), size, crc)?,
            other => return Err(bad(format!("unsupported compression {other}."))),
        };
        ranges.push((range, key.clone()));
        if arrays.insert(key.clone(), array).is_some() {
            return Err(file.error(op, format!("two entries are named '{key}'.")));
        }
    }
    check_disjoint(file, op, ranges)?;
    Ok(arrays)
}

/// A lazy array over a deflated npy entry: its header is inflated now, its data when
/// the array is evaluated.
fn deflated(
    file: &Arc<Mapping>,
    op: &str,
    name: &str,
    range: Range<usize>,
    size: u64,
    crc: u32,
) -> Result<Array> {
    let bad = |m: String| file.error(op, format!("'{name}': {m}"));
    let compressed = range.len() as u64;
    let mut inflater = Inflater::new(file.bytes(range.clone()));
    let mut header = Vec::new();
    let io = |e: std::io::Error| bad(e.to_string());
    (&mut inflater)
        .take(npy::PREAMBLE as u64)
        .read_to_end(&mut header)
        .map_err(io)?;
    let len = npy::header_len(&header).map_err(bad)?;
    let rest = len.saturating_sub(header.len()) as u64;
    (&mut inflater)
        .take(rest)
        .read_to_end(&mut header)
        .map_err(io)?;
    let header = npy::parse_header(&header).map_err(bad)?;
    let data = super::byte_size(file, op, &header.shape, header.dtype)?;
    if (header.len as u64).checked_add(data) != Some(size) {
        return Err(bad(format!(
            "header says {} bytes of data but the entry holds {size} bytes in all.",
            data
        )));
    }
    if size > compressed.saturating_mul(MAX_INFLATION) + npy::PREAMBLE as u64 {
        return Err(bad(format!(
            "{compressed} compressed bytes cannot hold {size} bytes."
        )));
    }
    let storage = Storage::Deflated {
        range,
        skip: header.len,
        crc,
    };
    Ok(lazy_array(
        file,
        name,
        storage,
        header.layout,
        header.shape,
        header.dtype,
    ))
}

/// A raw deflate stream being inflated, with the CRC-32 of what it gave so far.
pub(crate) struct Inflater<'a> {
    decoder: flate2::read::DeflateDecoder<&'a [u8]>,
    crc: flate2::Crc,
}

impl<'a> Inflater<'a> {
    pub(crate) fn new(compressed: &'a [u8]) -> Inflater<'a> {
        Inflater {
            decoder: flate2::read::DeflateDecoder::new(compressed),
            crc: flate2::Crc::new(),
        }
    }

    /// Inflates and drops `n` bytes.
    pub(crate) fn skip(&mut self, n: usize) -> std::io::Result<()> {
        let copied = std::io::copy(&mut self.take(n as u64), &mut std::io::sink())?;
        if copied != n as u64 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    /// Checks that the stream ends here and that its CRC-32 is `expected`.
    pub(crate) fn finish(mut self, expected: u32) -> std::io::Result<()> {
        let mut extra = [0u8; 1];
        if self.read(&mut extra)? != 0 {
            return Err(std::io::Error::other("more data than the header says"));
        }
        if self.crc.sum() != expected {
            return Err(std::io::Error::other("CRC-32 mismatch (corrupt data)"));
        }
        Ok(())
    }
}

impl Read for Inflater<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.decoder.read(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
}
