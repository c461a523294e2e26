//! The `distributed` submodule (`mx.distributed`): MLX's `Group`, `init`, `is_available`
//! and the communication ops, over `lazulite::distributed` (Open MPI, loaded at run time).

use crate::bind;
use crate::bind::Returned;
use crate::convert::{Arr, Dt, Shape};
use crate::errors::to_py_err;
use crate::signature::Hint;
use lazulite::distributed::{self as dist, Group};
use lazulite::{Array, Result};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// An :class:`mlx.core.distributed.Group` represents a group of independent mlx
/// processes that can communicate.
#[pyclass(name = "Group", module = "lazulite.core.distributed", frozen)]
pub struct PyGroup(Group);

#[pymethods]
impl PyGroup {
    /// Get the rank of this process
    fn rank(&self) -> usize {
        self.0.rank()
    }

    /// Get the size of the group
    fn size(&self) -> usize {
        self.0.size()
    }

    /// Split the group to subgroups based on the provided color.
    ///
    /// Processes that use the same color go to the same group. The ``key``
    /// argument defines the rank in the new group. The smaller the key the
    /// smaller the rank. If the key is negative then the rank in the
    /// current group is used.
    ///
    /// Args:
    ///     color (int): A value to group processes into subgroups.
    ///     key (int, optional): A key to optionally change the rank ordering
    ///         of the processes.
    #[pyo3(signature = (color, key = -1))]
    fn split(&self, color: i32, key: i32) -> PyResult<PyGroup> {
        let key = (key >= 0).then_some(key);
        self.0.split(color, key).map(PyGroup).map_err(to_py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "<lazulite.core.distributed.Group rank={} size={}>",
            self.0.rank(),
            self.0.size()
        )
    }
}

impl Returned for Group {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(Py::new(py, PyGroup(self))?.into_any())
    }
}

impl Returned for bool {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(pyo3::types::PyBool::new(py, self)
            .to_owned()
            .into_any()
            .unbind())
    }
}

/// A `group=` argument: a `Group` object.
pub struct GroupArg(Group);

impl<'a, 'py> FromPyObject<'a, 'py> for GroupArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<GroupArg> {
        let group = obj.cast::<PyGroup>().map_err(|_| {
            PyTypeError::new_err(format!(
                "Expected a distributed.Group for group but got {}.",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "an object".into(), |n| n.to_string())
            ))
        })?;
        Ok(GroupArg(group.get().0.clone()))
    }
}

impl Hint for GroupArg {
    fn hint() -> String {
        "distributed.Group".into()
    }
}

/// `init`'s `all_gather_factory`: a callable (only meaningful for MLX's `jaccl` backend).
pub struct Factory(#[allow(dead_code)] Py<PyAny>);

impl<'a, 'py> FromPyObject<'a, 'py> for Factory {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Factory> {
        Ok(Factory(obj.to_owned().unbind()))
    }
}

impl Hint for Factory {
    fn hint() -> String {
        "Callable[[int, int], Callable[[bytes, int], bytes]]".into()
    }
}

fn group_of(group: &Option<GroupArg>) -> Option<&Group> {
    group.as_ref().map(|g| &g.0)
}

fn init_group(strict: bool, backend: &str, all_gather_factory: Option<Factory>) -> PyResult<Group> {
    if all_gather_factory.is_some() && backend != "jaccl" {
        return Err(PyValueError::new_err(
            "all_gather_factory is only supported with backend='jaccl'.",
        ));
    }
    dist::init(strict, backend).map_err(to_py_err)
}

fn recv_from(shape: Shape, dtype: Dt, src: i64, group: &Option<GroupArg>) -> Result<Array> {
    dist::recv(&shape.0, dtype.0, src, group_of(group))
}

bind! {
    functions {
        /// Check if a communication backend is available.
        ///
        /// Note, this function returns whether the library can instantiate that
        /// distributed backend, not whether it is possible to create a communication
        /// group. For that purpose one should use ``init(strict=True)``.
        ///
        /// Args:
        ///     backend (str, optional): The name of the backend to check for availability.
        ///         It takes the same values as :func:`init()`. Default: ``"any"``.
        ///
        /// Returns:
        ///     bool: Whether the distributed backend is available.
        is_available(backend: &str = "any") => dist::is_available(backend);
        /// Initialize the communication backend and create the global communication group.
        ///
        /// lazulite communicates through MPI (Open MPI, loaded when a group is first
        /// initialised): launch the processes with ``mpirun`` or
        /// ``python -m lazulite.launch``. A process started alone gets a group of size 1.
        ///
        /// Args:
        ///     strict (bool, optional): If set to False it returns a singleton group
        ///         in case no group can be formed, otherwise it raises a RuntimeError.
        ///         Default: ``False``.
        ///     backend (str, optional): Which distributed backend to initialize.
        ///         Possible values ``mpi``, ``ring``, ``nccl``, ``jaccl``, ``any``; only
        ///         ``mpi`` (and ``any``, which picks it) can form a group. Default: ``any``.
        ///     all_gather_factory (callable, optional): MLX's hook for the ``jaccl``
        ///         backend; any other backend refuses it with a ValueError.
        ///
        /// Returns:
        ///     Group: The group representing all the launched processes.
        init(strict: bool = false, backend: &str = "any", *, all_gather_factory: Option<Factory> = None) => init_group(strict, backend, all_gather_factory);
        /// All reduce sum.
        ///
        /// Sum the ``x`` arrays from all processes in the group.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     group (Group): The group of processes that will participate in the
        ///         reduction. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The sum of all ``x`` arrays.
        all_sum(x: Arr, *, group: Option<GroupArg> = None, stream) => dist::all_sum(&x.0, group_of(&group));
        /// All reduce max.
        ///
        /// Find the maximum of the ``x`` arrays from all processes in the group.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     group (Group): The group of processes that will participate in the
        ///         reduction. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The maximum of all ``x`` arrays.
        all_max(x: Arr, *, group: Option<GroupArg> = None, stream) => dist::all_max(&x.0, group_of(&group));
        /// All reduce min.
        ///
        /// Find the minimum of the ``x`` arrays from all processes in the group.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     group (Group): The group of processes that will participate in the
        ///         reduction. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The minimum of all ``x`` arrays.
        all_min(x: Arr, *, group: Option<GroupArg> = None, stream) => dist::all_min(&x.0, group_of(&group));
        /// Gather arrays from all processes.
        ///
        /// Gather the ``x`` arrays from all processes in the group and concatenate
        /// them along the first axis. The arrays should all have the same shape.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     group (Group): The group of processes that will participate in the
        ///         gather. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The concatenation of all ``x`` arrays.
        all_gather(x: Arr, *, group: Option<GroupArg> = None, stream) => dist::all_gather(&x.0, group_of(&group));
        /// Sum ``x`` across all processes in the group and shard the result along the
        /// first axis across ranks. ``x.shape[0]`` must be divisible by the group size.
        ///
        /// The result equals ``all_sum(x)[rank*chunk_size:(rank+1)*chunk_size]``, where
        /// ``chunk_size = x.shape[0] // group.size()``, computed by one reduce-scatter.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     group (Group): The group of processes that will participate in the
        ///         sum scatter. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The output array with shape ``[x.shape[0] // group.size(), *x.shape[1:]]``.
        sum_scatter(x: Arr, *, group: Option<GroupArg> = None, stream) => dist::sum_scatter(&x.0, group_of(&group));
        /// Send an array from the current process to the process that has rank
        /// ``dst`` in the group.
        ///
        /// The send does not wait for the receiver, so a process may send and then
        /// receive in one evaluation.
        ///
        /// Args:
        ///     x (array): Input array.
        ///     dst (int): Rank of the destination process in the group.
        ///     group (Group): The group of processes that will participate in the
        ///         send. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: An array identical to ``x`` which when evaluated the send is performed.
        send(x: Arr, dst: i64, *, group: Option<GroupArg> = None, stream) => dist::send(&x.0, dst, group_of(&group));
        /// Recv an array with shape ``shape`` and dtype ``dtype`` from process
        /// with rank ``src``.
        ///
        /// Args:
        ///     shape (Tuple[int]): The shape of the array we are receiving.
        ///     dtype (Dtype): The data type of the array we are receiving.
        ///     src (int): Rank of the source process in the group.
        ///     group (Group): The group of processes that will participate in the
        ///         recv. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The array that was received from ``src``.
        recv(shape: Shape, dtype: Dt, src: i64, *, group: Option<GroupArg> = None, stream) => recv_from(shape, dtype, src, &group);
        /// Recv an array with shape and type like ``x`` from process with rank ``src``.
        ///
        /// It is equivalent to calling ``mx.distributed.recv(x.shape, x.dtype, src)``.
        ///
        /// Args:
        ///     x (array): An array defining the shape and dtype of the array we are
        ///         receiving.
        ///     src (int): Rank of the source process in the group.
        ///     group (Group): The group of processes that will participate in the
        ///         recv. If set to ``None`` the global group is used. Default: ``None``.
        ///     stream (Stream, optional): Stream or device. Defaults to ``None``.
        ///
        /// Returns:
        ///     array: The array that was received from ``src``.
        recv_like(x: Arr, src: i64, *, group: Option<GroupArg> = None, stream) => dist::recv_like(&x.0, src, group_of(&group));
    }
    methods {}
}

/// Adds `lazulite.core.distributed` to `parent`.
pub fn register_submodule(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "distributed")?;
    module.add_class::<PyGroup>()?;
    register(&module)?;
    parent.add_submodule(&module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("lazulite.core.distributed", &module)?;
    Ok(())
}
