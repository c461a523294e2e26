//! DLPack exchange (the `__dlpack__` capsule protocol), both ways, on the CPU device.
//!
//! Export: `array.__dlpack__()` evaluates the array and returns a `"dltensor"` capsule
//! over its memory (no copy; strides as they are). The capsule's managed tensor holds the
//! array's memory alive until the consumer calls its deleter; a capsule nobody consumed
//! (still named `"dltensor"`, not `"used_dltensor"`) calls it when collected.
//!
//! Import: `mx.array(obj)` for an `obj` with `__dlpack__` asks for a DLPack 1.x capsule
//! (`max_version=(1, 0)`, `"dltensor_versioned"`, which can carry read-only tensors),
//! falling back to the unversioned one for older producers; it renames the capsule
//! `"used_..."` and wraps the producer's memory without copying in a read-only
//! buffer (lazulite never computes results in place in it); the producer's deleter runs
//! when the last array over it is dropped. float64 becomes float32 without a dtype, as
//! for NumPy arrays in MLX.

use lazulite::{Array, DType, RawData};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::Mutex;

const CPU: i32 = 1;
const DLTENSOR: &CStr = c"dltensor";
const USED_DLTENSOR: &CStr = c"used_dltensor";
const DLTENSOR_VERSIONED: &CStr = c"dltensor_versioned";
const USED_DLTENSOR_VERSIONED: &CStr = c"used_dltensor_versioned";

#[repr(C)]
#[derive(Copy, Clone)]
struct Device {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Copy, Clone)]
struct DataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct Tensor {
    data: *mut c_void,
    device: Device,
    ndim: i32,
    dtype: DataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// DLManagedTensor (the unversioned form every consumer accepts).
#[repr(C)]
struct ManagedTensor {
    dl_tensor: Tensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut ManagedTensor)>,
}

#[repr(C)]
struct Version {
    major: u32,
    minor: u32,
}

/// DLManagedTensorVersioned (DLPack 1.x), which producers give when asked with
/// `max_version`; it can carry read-only tensors (NumPy's broadcasts, for instance).
#[repr(C)]
struct ManagedTensorVersioned {
    version: Version,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut ManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: Tensor,
}

/// DLPack type code and bits of each dtype (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
/// kDLComplex 5, kDLBool 6).
fn data_type(dtype: DType) -> DataType {
    use DType::*;
    let code = match dtype {
        Bool => 6,
        UInt8 | UInt16 | UInt32 | UInt64 => 1,
        Int8 | Int16 | Int32 | Int64 => 0,
        Float16 | Float32 | Float64 => 2,
        BFloat16 => 4,
        Complex64 => 5,
    };
    DataType {
        code,
        bits: (dtype.size() * 8) as u8,
        lanes: 1,
    }
}

fn dtype_of(t: DataType) -> Option<DType> {
    use DType::*;
    if t.lanes != 1 {
        return None;
    }
    Some(match (t.code, t.bits) {
        (6, 8) | (1, 1) => Bool,
        (1, 8) => UInt8,
        (1, 16) => UInt16,
        (1, 32) => UInt32,
        (1, 64) => UInt64,
        (0, 8) => Int8,
        (0, 16) => Int16,
        (0, 32) => Int32,
        (0, 64) => Int64,
        (2, 16) => Float16,
        (2, 32) => Float32,
        (2, 64) => Float64,
        (4, 16) => BFloat16,
        (5, 64) => Complex64,
        _ => return None,
    })
}

/// The exported tensor and everything it points into; `managed` comes first so that a
/// pointer to it is a pointer to the whole.
#[repr(C)]
struct Export {
    managed: ManagedTensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
    _raw: RawData,
}

unsafe extern "C" fn delete_export(managed: *mut ManagedTensor) {
    // SAFETY: `managed` is the first field of an `Export` boxed by `export`, and DLPack
    // calls the deleter once.
    unsafe { drop(Box::from_raw(managed as *mut Export)) };
}

/// Frees a capsule's tensor unless a consumer took it (and renamed the capsule).
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule; IsValid sets no error.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let managed =
                ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr()) as *mut ManagedTensor;
            if let Some(deleter) = (*managed).deleter {
                deleter(managed);
            }
        }
    }
}

/// `array.__dlpack__()`: a `"dltensor"` capsule over the evaluated array (see the
/// module docs). `copy=True` exports a fresh copy; other devices are refused.
pub fn export<'py>(
    py: Python<'py>,
    a: Array,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some((device, _)) = dl_device {
        if device != CPU {
            return Err(PyBufferError::new_err(
                "[__dlpack__] Only the CPU device (kDLCPU) is supported.",
            ));
        }
    }
    let raw = py
        .detach(|| {
            if copy == Some(true) {
                let raw = a.raw_data_contiguous()?;
                let n = a.size() * a.dtype().size();
                let bytes = if n == 0 {
                    &[][..]
                } else {
                    // SAFETY: contiguous data of `n` bytes, kept alive by `raw`.
                    unsafe { std::slice::from_raw_parts(raw.ptr(), n) }
                };
                Array::from_bytes(bytes, a.shape(), a.dtype())?.raw_data()
            } else {
                a.raw_data()
            }
        })
        .map_err(crate::errors::to_py_err)?;
    let item = raw.dtype().size() as isize;
    let mut export = Box::new(Export {
        managed: ManagedTensor {
            dl_tensor: Tensor {
                data: raw.ptr() as *mut c_void,
                device: Device {
                    device_type: CPU,
                    device_id: 0,
                },
                ndim: raw.shape().len() as i32,
                dtype: data_type(raw.dtype()),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_export),
        },
        shape: raw.shape().iter().map(|&d| d as i64).collect(),
        strides: raw
            .byte_strides()
            .iter()
            .map(|&s| (s / item) as i64)
            .collect(),
        _raw: raw,
    });
    export.managed.dl_tensor.shape = export.shape.as_mut_ptr();
    export.managed.dl_tensor.strides = export.strides.as_mut_ptr();
    let managed = Box::into_raw(export) as *mut ManagedTensor;
    // SAFETY: `managed` stays valid until its deleter runs (by the consumer, or by the
    // destructor of an unconsumed capsule).
    unsafe {
        (*managed).manager_ctx = managed as *mut c_void;
        let capsule = ffi::PyCapsule_New(
            managed as *mut c_void,
            DLTENSOR.as_ptr(),
            Some(capsule_destructor),
        );
        if capsule.is_null() {
            delete_export(managed);
        }
        Bound::from_owned_ptr_or_err(py, capsule)
    }
}

/// A producer's managed tensor, handed back through its deleter when dropped.
enum Imported {
    Legacy(NonNull<ManagedTensor>),
    Versioned(NonNull<ManagedTensorVersioned>),
}

// SAFETY: DLPack deleters may be called from any thread (producers that need the GIL,
// like NumPy, take it themselves); the tensor is only read.
unsafe impl Send for Imported {}
unsafe impl Sync for Imported {}

impl Imported {
    fn tensor(&self) -> &Tensor {
        // SAFETY: the producer keeps the tensor valid until its deleter runs (our drop).
        unsafe {
            match self {
                Imported::Legacy(m) => &(*m.as_ptr()).dl_tensor,
                Imported::Versioned(m) => &(*m.as_ptr()).dl_tensor,
            }
        }
    }
}

/// Imported tensors dropped on a thread without the GIL, whose deleters wait for
/// [`release_deferred`].
static DEFERRED: Mutex<Vec<Imported>> = Mutex::new(Vec::new());

/// Hands the tensors dropped without the GIL back to their producers; called with the GIL
/// held, where Python calls into lazulite to evaluate or import.
pub(crate) fn release_deferred(_py: Python<'_>) {
    let deferred = std::mem::take(&mut *DEFERRED.lock().unwrap_or_else(|e| e.into_inner()));
    drop(deferred);
}

impl Drop for Imported {
    fn drop(&mut self) {
        // A producer's deleter may take the GIL (NumPy's and PyTorch's do). The thread
        // behind `async_eval` drops the last handles to what it computed, and Python may
        // hold the GIL while it waits for that thread: a thread without the GIL leaves
        // the deleter to the next one that has it.
        // SAFETY: only asks whether this thread holds the GIL.
        if unsafe { ffi::PyGILState_Check() } == 0 {
            let again = match self {
                Imported::Legacy(m) => Imported::Legacy(*m),
                Imported::Versioned(m) => Imported::Versioned(*m),
            };
            DEFERRED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(again);
            return;
        }
        // SAFETY: the consumer (us) calls the deleter exactly once.
        unsafe {
            match self {
                Imported::Legacy(m) => {
                    if let Some(deleter) = (*m.as_ptr()).deleter {
                        deleter(m.as_ptr());
                    }
                }
                Imported::Versioned(m) => {
                    if let Some(deleter) = (*m.as_ptr()).deleter {
                        deleter(m.as_ptr());
                    }
                }
            }
        }
    }
}

/// Takes the managed tensor out of a producer's capsule (renaming it "used_..."), asking
/// for DLPack 1.x first and falling back to the unversioned protocol.
fn take_capsule(obj: &Bound<'_, PyAny>) -> PyResult<Imported> {
    let py = obj.py();
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("max_version", (1, 0))?;
    let capsule = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            obj.call_method0("__dlpack__")?
        }
        Err(e) => return Err(e),
    };
    // SAFETY: a DLPack capsule holds a managed tensor of the form its name says;
    // GetPointer checks the name.
    unsafe {
        let versioned = ffi::PyCapsule_IsValid(capsule.as_ptr(), DLTENSOR_VERSIONED.as_ptr()) == 1;
        let (name, used) = if versioned {
            (DLTENSOR_VERSIONED, USED_DLTENSOR_VERSIONED)
        } else {
            (DLTENSOR, USED_DLTENSOR)
        };
        let p = ffi::PyCapsule_GetPointer(capsule.as_ptr(), name.as_ptr());
        if p.is_null() {
            return Err(PyErr::fetch(py));
        }
        if ffi::PyCapsule_SetName(capsule.as_ptr(), used.as_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        if !versioned {
            return Ok(Imported::Legacy(NonNull::new_unchecked(
                p as *mut ManagedTensor,
            )));
        }
        let imported =
            Imported::Versioned(NonNull::new_unchecked(p as *mut ManagedTensorVersioned));
        let major = (*(p as *mut ManagedTensorVersioned)).version.major;
        if major != 1 {
            // Dropping `imported` hands the tensor back.
            drop(imported);
            return Err(PyBufferError::new_err(format!(
                "[array] DLPack version {major}.x is not supported (1.x is)."
            )));
        }
        Ok(imported)
    }
}

/// `mx.array(obj)` for an object with `__dlpack__`: `None` when the tensor is not one
/// lazulite can wrap (another device, an unknown dtype, misaligned data), so that the
/// caller converts it another way.
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    release_deferred(obj.py());
    if let Ok(device) = obj.call_method0("__dlpack_device__") {
        if device.extract::<(i32, i32)>().ok().map(|d| d.0) != Some(CPU) {
            return Ok(None);
        }
    }
    let owner = take_capsule(obj)?;
    let t = owner.tensor();
    let Some(dtype) = dtype_of(t.dtype) else {
        return Ok(None);
    };
    if t.device.device_type != CPU || t.ndim < 0 {
        return Ok(None);
    }
    let ndim = t.ndim as usize;
    let shape: Vec<usize> = if ndim == 0 {
        Vec::new()
    } else {
        // SAFETY: DLPack gives `ndim` dimensions.
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                PyValueError::new_err("[array] DLPack tensor with a negative dimension.")
            })?
    };
    let strides: Vec<isize> = if t.strides.is_null() || ndim == 0 {
        let mut acc = 1isize;
        let mut s: Vec<isize> = shape
            .iter()
            .rev()
            .map(|&d| {
                let here = acc;
                acc *= d.max(1) as isize;
                here
            })
            .collect();
        s.reverse();
        s
    } else {
        // SAFETY: non-null strides have `ndim` entries.
        unsafe { std::slice::from_raw_parts(t.strides, ndim) }
            .iter()
            .map(|&s| s as isize)
            .collect()
    };
    let data = (t.data as *mut u8).wrapping_add(t.byte_offset as usize);
    let empty = shape.contains(&0);
    let Some(data) =
        NonNull::new(data).filter(|p| empty || (p.as_ptr() as usize).is_multiple_of(dtype.size()))
    else {
        return Ok(None);
    };
    // SAFETY: a CPU DLPack tensor's elements are readable at these strides while the
    // producer's tensor lives, which `owner` ensures; DLPack tensors are not written by
    // consumers, and lazulite wraps them read-only.
    let a = unsafe { Array::from_external(data, &shape, &strides, dtype, Box::new(owner)) }
        .map_err(crate::errors::to_py_err)?;
    Ok(Some(a))
}

#[pymethods]
impl crate::array::PyArray {
    /// A DLPack capsule over the array's memory (no copy); see the module docs.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    #[allow(unused_variables)]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Py<PyAny>>,
        max_version: Option<Py<PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        export(py, self.array(), dl_device, copy)
    }

    /// `(kDLCPU, 0)`: arrays live in CPU memory.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (CPU, 0)
    }
}
