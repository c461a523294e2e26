//! Devices and streams with MLX's names and printed forms: `Device`, `DeviceType`,
//! `Stream`, `ThreadLocalStream`, `StreamContext`, `mx.cpu`/`mx.gpu`, the default-device and
//! default-stream functions, and the `cuda` and `metal` submodules.
//!
//! lazulite computes on one CPU device and every op finishes its work when evaluated, so
//! streams are names only: they order nothing and `synchronize` has nothing to wait for.
//! The GPU device type exists, as in MLX's CPU-only Linux build, and using it raises the
//! errors that build raises. [`StreamOrDevice`] is the `stream=` argument of every op.

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, Ordering};

/// The kind of a device: the Rust side of the Python `DeviceType` enum.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    Cpu,
    Gpu,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::Gpu => "gpu",
        }
    }
}

/// The Python `DeviceType` class: a real `enum.Enum` (iterable, with `name` and `value`),
/// as MLX's is.
static DEVICE_TYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn device_type_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    DEVICE_TYPE
        .get_or_try_init(py, || {
            let members = PyDict::new(py);
            members.set_item("cpu", 0)?;
            members.set_item("gpu", 1)?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("module", "lazulite.core")?;
            let base = py.import("enum")?.getattr("Enum")?;
            let class = base.call(("DeviceType", members), Some(&kwargs))?;
            // MLX prints members as `DeviceType.cpu`, not Python's `<DeviceType.cpu: 0>`.
            class.setattr("__repr__", base.getattr("__str__")?)?;
            class.setattr("__doc__", "The type of a device: ``cpu`` or ``gpu``.")?;
            Ok(class.unbind())
        })
        .map(|class| class.bind(py))
}

fn device_type_member(py: Python<'_>, kind: Kind) -> PyResult<Py<PyAny>> {
    Ok(device_type_class(py)?.getattr(kind.name())?.unbind())
}

/// The kind of `obj` if it is a `DeviceType` member.
fn kind_of_member(obj: &Bound<'_, PyAny>) -> PyResult<Option<Kind>> {
    if !obj.is_instance(device_type_class(obj.py())?)? {
        return Ok(None);
    }
    let value: i64 = obj.getattr("value")?.extract()?;
    Ok(Some(if value == 0 { Kind::Cpu } else { Kind::Gpu }))
}

/// A device to run operations on.
#[pyclass(name = "Device", module = "lazulite.core", frozen, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Device {
    kind: Kind,
    index: i32,
}

const CPU: Device = Device {
    kind: Kind::Cpu,
    index: 0,
};

impl Device {
    /// The device `obj` names: a `Device` or a `DeviceType` member (its device 0).
    fn of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Device>> {
        if let Ok(device) = obj.cast::<Device>() {
            return Ok(Some(*device.get()));
        }
        Ok(kind_of_member(obj)?.map(|kind| Device { kind, index: 0 }))
    }

    fn exists(self) -> bool {
        self == CPU
    }

    /// The error for a device lazulite does not have, raised by the function `op`; `verb`
    /// says what `op` could not do (MLX's own words for the GPU).
    fn missing(self, op: &str, verb: &str) -> PyErr {
        match self.kind {
            Kind::Gpu => PyValueError::new_err(format!(
                "[{op}] Cannot {verb} gpu {} without gpu backend.",
                if op == "set_default_device" {
                    "device"
                } else {
                    "stream"
                }
            )),
            Kind::Cpu => PyIndexError::new_err(format!(
                "[{op}] There is no {self}; lazulite has one device, Device(cpu, 0)."
            )),
        }
    }

    /// This device's default stream in the calling thread.
    fn default_stream(self) -> PyResult<Stream> {
        if !self.exists() {
            return Err(self.missing("default_stream", "get"));
        }
        let index = THREAD_DEFAULT_STREAM.with(|cell| match cell.get() {
            Some(index) => index,
            None => {
                let index = NEXT_STREAM.fetch_add(1, Ordering::Relaxed);
                cell.set(Some(index));
                index
            }
        });
        Ok(Stream {
            device: self,
            index,
        })
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({}, {})", self.kind.name(), self.index)
    }
}

#[pymethods]
impl Device {
    #[new]
    #[pyo3(signature = (r#type, index = 0))]
    fn new(r#type: &Bound<'_, PyAny>, index: i32) -> PyResult<Device> {
        match kind_of_member(r#type)? {
            Some(kind) => Ok(Device { kind, index }),
            None => Err(PyTypeError::new_err(format!(
                "Device() takes a DeviceType (mx.cpu or mx.gpu), not {}.",
                r#type.get_type().name()?
            ))),
        }
    }

    /// The device's type, ``DeviceType.cpu`` or ``DeviceType.gpu``.
    #[getter(r#type)]
    fn device_type(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        device_type_member(py, self.kind)
    }

    fn __repr__(&self) -> String {
        self.to_string()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(Device::of(other)? == Some(*self))
    }

    fn __hash__(&self) -> u64 {
        (self.kind as u64) << 32 | self.index as u32 as u64
    }
}

/// The index the next stream gets; MLX numbers streams in creation order from 0.
static NEXT_STREAM: AtomicI32 = AtomicI32::new(0);

/// The index the next thread-local stream gets (MLX counts them apart from streams).
static NEXT_THREAD_LOCAL_STREAM: AtomicI32 = AtomicI32::new(0);

thread_local! {
    /// The calling thread's default CPU stream, made on first use: MLX gives each thread
    /// its own.
    static THREAD_DEFAULT_STREAM: Cell<Option<i32>> = const { Cell::new(None) };
}

/// A stream for running operations on a given device.
#[pyclass(name = "Stream", module = "lazulite.core", frozen, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Stream {
    device: Device,
    index: i32,
}

impl std::fmt::Display for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({}, {})", self.device, self.index)
    }
}

#[pymethods]
impl Stream {
    /// The device the stream runs on.
    #[getter]
    fn device(&self) -> Device {
        self.device
    }

    fn __repr__(&self) -> String {
        self.to_string()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Stream>().is_ok_and(|s| *s.get() == *self)
    }

    fn __hash__(&self) -> u64 {
        Device::__hash__(&self.device) ^ (self.index as u32 as u64) << 40
    }
}

/// A stream that will be unique per thread and can be used to run operations on a given
/// device.
#[pyclass(
    name = "ThreadLocalStream",
    module = "lazulite.core",
    frozen,
    from_py_object
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ThreadLocalStream {
    device: Device,
    index: i32,
}

#[pymethods]
impl ThreadLocalStream {
    /// The device the stream runs on.
    #[getter]
    fn device(&self) -> Device {
        self.device
    }

    fn __repr__(&self) -> String {
        format!("ThreadLocalStream({}, {})", self.device, self.index)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<ThreadLocalStream>()
            .is_ok_and(|s| *s.get() == *self)
    }

    fn __hash__(&self) -> u64 {
        Device::__hash__(&self.device) ^ (self.index as u32 as u64) << 40
    }
}

/// The `stream=` argument of an op, and the argument of `stream`/`synchronize`: a
/// `Stream`, a `ThreadLocalStream`, a `Device` or a `DeviceType`, resolved to the stream
/// the op would run on. A device lazulite lacks (the GPU) raises MLX's error.
pub struct StreamOrDevice(Stream);

impl StreamOrDevice {
    /// The stream `obj` names, or `None` if `obj` is not a stream or device.
    fn resolve(obj: &Bound<'_, PyAny>) -> PyResult<Option<Stream>> {
        if let Ok(stream) = obj.cast::<Stream>() {
            return Ok(Some(*stream.get()));
        }
        if let Ok(stream) = obj.cast::<ThreadLocalStream>() {
            return stream.get().device.default_stream().map(Some);
        }
        match Device::of(obj)? {
            Some(device) => device.default_stream().map(Some),
            None => Ok(None),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for StreamOrDevice {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<StreamOrDevice> {
        match StreamOrDevice::resolve(&obj)? {
            Some(stream) => Ok(StreamOrDevice(stream)),
            None => Err(PyTypeError::new_err(format!(
                "stream must be a Stream, ThreadLocalStream, Device, DeviceType or None, not {}",
                obj.get_type().name()?
            ))),
        }
    }
}

fn device_arg(obj: &Bound<'_, PyAny>, function: &str) -> PyResult<Device> {
    Device::of(obj)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{function}() takes a Device or DeviceType, not {}",
            obj.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })
}

/// Get the default device.
#[pyfunction]
fn default_device() -> Device {
    CPU
}

/// Set the default device.
///
/// lazulite has one device, ``Device(cpu, 0)``; any other raises (the GPU as in MLX's
/// CPU-only build).
#[pyfunction]
fn set_default_device(device: &Bound<'_, PyAny>) -> PyResult<()> {
    let device = device_arg(device, "set_default_device")?;
    if !device.exists() {
        return Err(device.missing("set_default_device", "set"));
    }
    Ok(())
}

/// Get the device's default stream.
#[pyfunction]
fn default_stream(device: &Bound<'_, PyAny>) -> PyResult<Stream> {
    device_arg(device, "default_stream")?.default_stream()
}

/// Set the default stream.
///
/// This will make the given stream the default for the streams device. It will not
/// change the default device.
///
/// Args:
///   stream (stream): Stream to make the default.
#[pyfunction]
fn set_default_stream(stream: &Bound<'_, PyAny>) -> PyResult<()> {
    let stream = stream.cast::<Stream>().map_err(|_| {
        PyTypeError::new_err(format!(
            "set_default_stream() takes a Stream, not {}",
            stream
                .get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    THREAD_DEFAULT_STREAM.with(|cell| cell.set(Some(stream.get().index)));
    Ok(())
}

/// Make a new stream on the given device.
#[pyfunction]
fn new_stream(device: &Bound<'_, PyAny>) -> PyResult<Stream> {
    made_stream(device, "new_stream")
}

/// Make a new stream on the given device that any thread may use.
///
/// Every lazulite stream may be used from any thread, so this is `new_stream` under the
/// name MLX gives its thread-unsafe streams; evaluating one graph from two threads at
/// once is still the caller's to avoid.
#[pyfunction(name = "new_thread_unsafe_stream")]
fn new_any_thread_stream(device: &Bound<'_, PyAny>) -> PyResult<Stream> {
    made_stream(device, "new_thread_unsafe_stream")
}

/// A new stream on `device`, numbered after every stream made so far; `op` names the
/// function making it in errors.
fn made_stream(device: &Bound<'_, PyAny>, op: &str) -> PyResult<Stream> {
    let device = device_arg(device, op)?;
    if !device.exists() {
        return Err(device.missing(op, "make"));
    }
    Ok(Stream {
        device,
        index: NEXT_STREAM.fetch_add(1, Ordering::Relaxed),
    })
}

/// Make a new stream that will be unique per thread.
#[pyfunction]
fn new_thread_local_stream(device: &Bound<'_, PyAny>) -> PyResult<ThreadLocalStream> {
    Ok(ThreadLocalStream {
        device: device_arg(device, "new_thread_local_stream")?,
        index: NEXT_THREAD_LOCAL_STREAM.fetch_add(1, Ordering::Relaxed),
    })
}

/// Destroy all streams created in current thread.
///
/// lazulite's streams hold no resources, so there is nothing to free; existing stream
/// objects stay usable.
#[pyfunction]
fn clear_streams() {}

/// Synchronize with the given stream.
///
/// Waits until every array queued by ``async_eval`` so far is computed. lazulite runs
/// all streams' work on one evaluation thread, so any stream waits for all of it; the
/// argument is checked as an op's ``stream`` is.
///
/// Args:
///   stream (Stream, optional): The stream to synchronize with. If ``None`` then the
///      default stream of the default device is used. Default: ``None``.
#[pyfunction]
#[pyo3(signature = (stream = None))]
// Converting `stream` is its whole check: one thread computes every stream's work.
#[allow(unused_variables)]
fn synchronize(py: Python<'_>, stream: Option<StreamOrDevice>) {
    py.detach(lazulite::synchronize);
}

/// Check if a back-end is available for the given device.
#[pyfunction]
fn is_available(device: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(device_arg(device, "is_available")?.exists())
}

/// Get the number of available devices for the given device type.
///
/// Args:
///   device_type (DeviceType): The type of device to query.
///
/// Returns:
///   int: The number of available devices: 1 for ``cpu``, 0 for ``gpu``.
#[pyfunction]
fn device_count(device_type: &Bound<'_, PyAny>) -> PyResult<usize> {
    match kind_of_member(device_type)? {
        Some(Kind::Cpu) => Ok(1),
        Some(Kind::Gpu) => Ok(0),
        None => Err(PyTypeError::new_err(format!(
            "device_count() takes a DeviceType, not {}",
            device_type.get_type().name()?
        ))),
    }
}

/// The processor's name from `/proc/cpuinfo` (Linux), else the architecture.
fn processor_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Get information about a device.
///
/// Returns a dictionary with device properties: ``architecture`` and ``device_name`` for
/// the CPU, as MLX's CPU build; an empty dictionary for a device that does not exist.
///
/// Args:
///     d (Device): The device to query (defaults to the default device).
///
/// Returns:
///     dict: Device information.
#[pyfunction]
#[pyo3(signature = (d = None))]
fn device_info<'py>(
    py: Python<'py>,
    d: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let device = match d {
        Some(d) => device_arg(d, "device_info")?,
        None => CPU,
    };
    let info = PyDict::new(py);
    if device.exists() {
        info.set_item("architecture", std::env::consts::ARCH)?;
        info.set_item("device_name", processor_name())?;
    }
    Ok(info)
}

/// A context manager that makes a stream (or a device's default stream) the default
/// inside a ``with`` block and restores the previous default on exit.
#[pyclass(name = "StreamContext", module = "lazulite.core")]
struct StreamContext {
    stream: Stream,
    saved: Option<Option<i32>>,
}

#[pymethods]
impl StreamContext {
    #[new]
    fn new(s: StreamOrDevice) -> StreamContext {
        StreamContext {
            stream: s.0,
            saved: None,
        }
    }

    fn __enter__(&mut self) {
        let previous = THREAD_DEFAULT_STREAM.with(|cell| cell.replace(Some(self.stream.index)));
        self.saved = Some(previous);
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> bool {
        if let Some(previous) = self.saved.take() {
            THREAD_DEFAULT_STREAM.with(|cell| cell.set(previous));
        }
        false
    }
}

/// Create a context manager to set the default device and stream.
///
/// Args:
///     s: The :obj:`Stream` or :obj:`Device` to set as the default.
///
/// Returns:
///     A context manager that sets the default device and stream.
///
/// Example:
///
/// .. code-block::python
///
///   import lazulite.core as mx
///
///   # Create a context manager for the default device and stream.
///   with mx.stream(mx.cpu):
///       # Operations here will use mx.cpu by default.
///       pass
#[pyfunction]
fn stream(s: StreamOrDevice) -> StreamContext {
    StreamContext::new(s)
}

/// Whether a CUDA or Metal back-end is available: never in lazulite.
#[pyfunction]
#[pyo3(name = "is_available")]
fn backend_is_available() -> bool {
    false
}

/// Metal's GPU capture: lazulite has no GPU to capture, so nothing happens.
#[pyfunction]
fn start_capture(path: &str) {
    let _ = path;
}

/// Ends a Metal GPU capture: nothing to end in lazulite.
#[pyfunction]
fn stop_capture() {}

/// Adds a submodule `lazulite.core.<name>` holding `is_available` (always `False`).
fn backend_submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
) -> PyResult<Bound<'py, PyModule>> {
    let py = parent.py();
    let module = PyModule::new(py, name)?;
    module.add_function(wrap_pyfunction!(backend_is_available, &module)?)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(format!("lazulite.core.{name}"), &module)?;
    Ok(module)
}

/// Names `mx.metal` keeps for the memory functions and `device_info` of `mx` (MLX
/// deprecates them there in favour of the `mx` ones).
const METAL_ALIASES: [&str; 9] = [
    "clear_cache",
    "device_info",
    "get_active_memory",
    "get_cache_memory",
    "get_peak_memory",
    "reset_peak_memory",
    "set_cache_limit",
    "set_memory_limit",
    "set_wired_limit",
];

/// Adds the device and stream classes and functions, `cpu`/`gpu`, and the `cuda` and
/// `metal` submodules to `module`. Call after the memory functions are registered (the
/// `metal` submodule refers to them).
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let device_type = device_type_class(py)?;
    module.add("DeviceType", device_type)?;
    module.add("cpu", device_type.getattr("cpu")?)?;
    module.add("gpu", device_type.getattr("gpu")?)?;
    module.add_class::<Device>()?;
    module.add_class::<Stream>()?;
    module.add_class::<ThreadLocalStream>()?;
    module.add_class::<StreamContext>()?;
    module.add_function(wrap_pyfunction!(default_device, module)?)?;
    module.add_function(wrap_pyfunction!(set_default_device, module)?)?;
    module.add_function(wrap_pyfunction!(default_stream, module)?)?;
    module.add_function(wrap_pyfunction!(set_default_stream, module)?)?;
    module.add_function(wrap_pyfunction!(new_stream, module)?)?;
    module.add_function(wrap_pyfunction!(new_any_thread_stream, module)?)?;
    module.add_function(wrap_pyfunction!(new_thread_local_stream, module)?)?;
    module.add_function(wrap_pyfunction!(clear_streams, module)?)?;
    module.add_function(wrap_pyfunction!(synchronize, module)?)?;
    module.add_function(wrap_pyfunction!(is_available, module)?)?;
    module.add_function(wrap_pyfunction!(device_count, module)?)?;
    module.add_function(wrap_pyfunction!(device_info, module)?)?;
    module.add_function(wrap_pyfunction!(stream, module)?)?;
    backend_submodule(module, "cuda")?;
    let metal = backend_submodule(module, "metal")?;
    for name in METAL_ALIASES {
        metal.add(name, module.getattr(name)?)?;
    }
    metal.add_function(wrap_pyfunction!(start_capture, &metal)?)?;
    metal.add_function(wrap_pyfunction!(stop_capture, &metal)?)?;
    Ok(())
}
