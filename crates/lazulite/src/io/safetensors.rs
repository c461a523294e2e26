//! Hugging Face's `.safetensors`: an 8-byte header length, a JSON header (dtype, shape and
//! byte range of each tensor, optional string metadata) and the little-endian data.

use super::json::{self, Json};
use super::{check_disjoint, lazy_array, Layout, Mapping, MetadataValue, Storage};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The reference implementation's limit on the header length.
const MAX_HEADER: u64 = 100_000_000;

fn name_of(dtype: DType) -> &'static str {
    use DType::*;
    match dtype {
        Bool => "BOOL",
        UInt8 => "U8",
        UInt16 => "U16",
        UInt32 => "U32",
        UInt64 => "U64",
        Int8 => "I8",
        Int16 => "I16",
        Int32 => "I32",
        Int64 => "I64",
        Float16 => "F16",
        BFloat16 => "BF16",
        Float32 => "F32",
        Float64 => "F64",
        Complex64 => "C64",
    }
}

fn dtype_of(name: &str) -> Option<DType> {
    match name {
        // 8-bit floats load as their bytes, as in MLX (`from_fp8` decodes E4M3; E8M0 is
        // the exponent-only scale format of the microscaling quantization modes).
        "F8_E4M3" | "F8_E8M0" => Some(DType::UInt8),
        _ => DType::ALL.into_iter().find(|&d| name_of(d) == name),
    }
}

/// Saves named arrays to `path` in `.safetensors` format, adding the extension when
/// missing (MLX: `save_safetensors(file, arrays, metadata=None)`). Every dtype is
/// accepted (complex64 as `C64`, as MLX writes it; float64, which MLX refuses, as `F64`).
/// Tensors are laid out largest element size first, so that each is aligned in the file
/// and loads without a copy.
///
/// ```
/// use lazulite::{load, save_safetensors, Array, Loaded, MetadataValue};
/// use std::collections::BTreeMap;
/// let path = std::env::temp_dir().join("lazulite_doc_safetensors");
/// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
/// let metadata = BTreeMap::from([("format".to_string(), "mlx".to_string())]);
/// save_safetensors(&path, [("a", &a)], Some(&metadata)).unwrap();
/// let file = path.with_extension("safetensors");
/// let Loaded::WithMetadata(arrays, meta) = load(&file, None, true).unwrap() else { panic!() };
/// assert_eq!(arrays["a"].to_vec::<f32>().unwrap(), vec![1.0]);
/// assert!(matches!(&meta["format"], MetadataValue::String(s) if s == "mlx"));
/// ```
pub fn save_safetensors<K: AsRef<str>, V: Borrow<Array>>(
    path: impl AsRef<Path>,
    arrays: impl IntoIterator<Item = (K, V)>,
    metadata: Option<&BTreeMap<String, String>>,
) -> Result<()> {
    let path = super::with_extension(path.as_ref(), "safetensors");
    let named: Vec<(String, V)> = arrays
        .into_iter()
        .map(|(k, v)| (k.as_ref().to_string(), v))
        .collect();
    let refs: Vec<&Array> = named.iter().map(|(_, v)| v.borrow()).collect();
    let tensors = super::evaluated(&refs)?;
    let mut order: Vec<usize> = (0..named.len()).collect();
    order.sort_by(|&i, &j| {
        (std::cmp::Reverse(tensors[i].dtype.size()), &named[i].0)
            .cmp(&(std::cmp::Reverse(tensors[j].dtype.size()), &named[j].0))
    });
    let mut fields = Vec::new();
    if let Some(metadata) = metadata {
        let entries: Vec<String> = metadata
            .iter()
            .map(|(k, v)| format!("{}:{}", json::quote(k), json::quote(v)))
            .collect();
        fields.push(format!("\"__metadata__\":{{{}}}", entries.join(",")));
    }
    let mut offset = 0usize;
    for pair in order.windows(2) {
        if named[pair[0]].0 == named[pair[1]].0 {
            return Err(Error::value(format!(
                "[save_safetensors] The name '{}' is given twice.",
                named[pair[0]].0
            )));
        }
    }
    for &i in &order {
        let t = &tensors[i];
        let bytes = t.size() * t.dtype.size();
        let shape: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
        fields.push(format!(
            "{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            json::quote(&named[i].0),
            name_of(t.dtype),
            shape.join(","),
            offset,
            offset + bytes
        ));
        offset += bytes;
    }
    let mut header = format!("{{{}}}", fields.join(",")).into_bytes();
    // Pad so that the data starts 8-byte aligned, as the reference writer does.
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    super::write_atomic(&path, |w| {
        super::put(w, &path, &(header.len() as u64).to_le_bytes())?;
        super::put(w, &path, &header)?;
        for &i in &order {
            super::put(w, &path, &super::le_bytes(&tensors[i]))?;
        }
        Ok(())
    })
}

type Arrays = BTreeMap<String, Array>;
type Metadata = BTreeMap<String, MetadataValue>;

/// The arrays and string metadata of a `.safetensors` file.
pub(crate) fn load(file: &Arc<Mapping>) -> Result<(Arrays, Metadata)> {
    let op = "load_safetensors";
    let prefix = file.range(op, "header length", 0, 8)?;
    let mut len = [0u8; 8];
    len.copy_from_slice(file.bytes(prefix));
    let header_len = u64::from_le_bytes(len);
    if header_len > MAX_HEADER {
        return Err(file.error(op, format!("header length {header_len} is too large.")));
    }
    let header_range = file.range(op, "header", 8, header_len)?;
    let data_start = header_range.end as u64;
    let data_len = file.len() as u64 - data_start;
    let Json::Object(fields) =
        json::parse(file.bytes(header_range)).map_err(|m| file.error(op, m))?
    else {
        return Err(file.error(op, "the header is not a JSON object."));
    };
    let mut arrays = BTreeMap::new();
    let mut metadata = BTreeMap::new();
    let mut ranges = Vec::new();
    for (name, value) in fields {
        let bad = |m: &str| file.error(op, format!("'{name}': {m}"));
        if name == "__metadata__" {
            match value {
                Json::Null => {}
                Json::Object(entries) => {
                    for (k, v) in entries {
                        let Json::String(v) = v else {
                            return Err(bad("metadata values must be strings."));
                        };
                        metadata.insert(k, MetadataValue::String(v));
                    }
                }
                _ => return Err(bad("metadata must be an object of strings.")),
            }
            continue;
        }
        let Json::Object(info) = value else {
            return Err(bad("tensor entry is not an object."));
        };
        let field = |key: &str| info.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let dtype = match field("dtype") {
            Some(Json::String(d)) => {
                dtype_of(d).ok_or_else(|| bad(&format!("unsupported dtype '{d}'.")))?
            }
            _ => return Err(bad("missing or non-string 'dtype'.")),
        };
        let ints = |key: &str| -> Result<Vec<u64>> {
            match field(key) {
                Some(Json::Array(items)) if items.len() <= 64 => items
                    .iter()
                    .map(|v| {
                        v.as_u64()
                            .ok_or_else(|| bad(&format!("'{key}' holds a non-integer.")))
                    })
                    .collect(),
                _ => Err(bad(&format!("missing or malformed '{key}'."))),
            }
        };
        let shape = ints("shape")?
            .into_iter()
            .map(|d| usize::try_from(d).map_err(|_| bad("dimension too large.")))
            .collect::<Result<Vec<usize>>>()?;
        let offsets = ints("data_offsets")?;
        let [begin, end] = offsets[..] else {
            return Err(bad("'data_offsets' must hold two numbers."));
        };
        let bytes = super::byte_size(file, op, &shape, dtype)?;
        if end < begin || end - begin != bytes || end > data_len {
            return Err(bad(&format!(
                "data_offsets [{begin}, {end}] do not fit shape {shape:?} of {dtype} ({bytes} \
                 bytes) within {data_len} bytes of data."
            )));
        }
        let range = file.range(op, &name, data_start + begin, bytes)?;
        ranges.push((range.clone(), name.clone()));
        let array = lazy_array(
            file,
            &name,
            Storage::Raw(range),
            Layout::little_endian(),
            shape,
            dtype,
        );
        if arrays.insert(name.clone(), array).is_some() {
            return Err(bad("the name appears twice."));
        }
    }
    check_disjoint(file, op, ranges)?;
    Ok((arrays, metadata))
}
