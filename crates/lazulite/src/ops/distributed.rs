//! Communication between processes (`lazulite::distributed`, Python `mx.distributed`):
//! groups of processes and the collective ops `all_sum`, `all_max`, `all_min`,
//! `all_gather`, `sum_scatter`, `send`, `recv` and `recv_like`.
//!
//! The ops are primitives of the lazy graph like any other: they communicate when
//! evaluated, and compose with `grad`, `vmap` and `compile`. The engine is MPI (Open
//! MPI, loaded at run time when a group is first initialised; see `backend::mpi`). A
//! process started without `mpirun`, or on a machine without MPI, gets a group of one,
//! in which reductions and gathers return their input, as in MLX.
//!
//! Derivatives follow MLX's convention for programs where every process computes its
//! own copy of a loss: the cotangent of `all_sum`'s output is its input's (not summed
//! again), `all_gather`'s input gets its own block of the output's cotangent. Where MLX
//! passes the whole cotangent through `all_max`/`all_min`, lazulite sends it to the
//! elements that were the extremum (split equally between ties across processes), which
//! is the derivative finite differences measure.
//!
//! Before each collective the processes check (with a 16-byte reduction) that they all
//! passed the same shape and dtype, so a mismatch is an error on every process rather
//! than a hang or corrupt result on some.
//!
//! ```
//! use lazulite::{distributed, Array};
//! let group = distributed::init(false, "any").unwrap();   // a group of one without mpirun
//! let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
//! let total = distributed::all_sum(&x, Some(&group)).unwrap();
//! assert_eq!(total.to_vec::<f32>().unwrap(), vec![1.0 * group.size() as f32, 2.0 * group.size() as f32]);
//! ```

use crate::array::Array;
use crate::backend::cpu::copy::contiguous;
use crate::backend::mpi::{self, Comm, Reduction};
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{divide, equal, multiply};
use crate::ops::cast::astype;
use crate::ops::shape::{expand_dims, squeeze};
use crate::ops::view::slice_axis;
use crate::primitive::{no_rule, OutputSpec, Primitive};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// A group of processes that communicate: the whole job from [`init`], or a part of it
/// from [`Group::split`]. Cheap to clone.
///
/// ```
/// let group = lazulite::distributed::init(false, "any").unwrap();
/// assert!(group.rank() < group.size());
/// ```
#[derive(Clone)]
pub struct Group {
    comm: Option<Arc<Comm>>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Group(rank={}, size={})", self.rank(), self.size())
    }
}

impl Group {
    fn singleton() -> Group {
        Group { comm: None }
    }

    /// This process's rank in the group, from 0 to `size() - 1`.
    ///
    /// ```
    /// assert_eq!(lazulite::distributed::init(false, "any").unwrap().rank() < 1024, true);
    /// ```
    pub fn rank(&self) -> usize {
        self.comm.as_ref().map_or(0, |c| c.rank())
    }

    /// The number of processes in the group.
    ///
    /// ```
    /// assert!(lazulite::distributed::init(false, "any").unwrap().size() >= 1);
    /// ```
    pub fn size(&self) -> usize {
        self.comm.as_ref().map_or(1, |c| c.size())
    }

    /// Splits the group: processes passing the same `color` form a new group, ranked by
    /// `key` (by their rank here when `None`). Every process of the group must call it.
    /// A negative color is a value error on every process; a group of one cannot split.
    ///
    /// ```
    /// let group = lazulite::distributed::init(false, "any").unwrap();
    /// if group.size() == 1 {
    ///     assert!(group.split(0, None).is_err());
    /// }
    /// ```
    pub fn split(&self, color: i32, key: Option<i32>) -> Result<Group> {
        let Some(comm) = &self.comm else {
            return Err(Error::runtime(
                "Cannot split the distributed group further.",
            ));
        };
        // Agree first, so that one process's bad color fails every process.
        if !comm.agree(u64::from(color >= 0) << 1)? {
            return Err(Error::value(format!(
                "[split] Every process must pass a non-negative color; this one passed \
                 {color}."
            )));
        }
        if color < 0 {
            return Err(Error::value(format!(
                "[split] Colors must be non-negative, got {color}."
            )));
        }
        let key = key.unwrap_or(comm.rank() as i32);
        Ok(Group {
            comm: Some(Arc::new(comm.split(color, key)?)),
        })
    }

    fn comm(&self, op: &str) -> Result<&Arc<Comm>> {
        self.comm.as_ref().ok_or_else(|| {
            Error::runtime(format!(
                "[{op}] Communication not implemented in an empty distributed group."
            ))
        })
    }
}

/// The MPI world group, once [`init`] formed one.
static WORLD: Mutex<Option<Group>> = Mutex::new(None);

/// The backends lazulite knows: `"mpi"` (Open MPI) and `"any"` (the first that works).
/// MLX's other names (`"ring"`, `"jaccl"`, `"nccl"`) are accepted and never available.
const BACKENDS: [&str; 5] = ["any", "mpi", "ring", "jaccl", "nccl"];

/// Whether `backend` can be used on this machine: for `"mpi"` and `"any"`, whether an
/// Open MPI library loads. Whether a group larger than one forms depends also on how
/// the process was launched (see [`init`]).
///
/// ```
/// assert!(!lazulite::distributed::is_available("ring"));
/// ```
pub fn is_available(backend: &str) -> bool {
    matches!(backend, "any" | "mpi") && mpi::is_available()
}

/// The global group of `backend` (`"any"` or `"mpi"`), initialising MPI the first time.
/// A process not launched with peers (by `mpirun`), or without MPI, gets a group of one,
/// or an error if `strict`. Later calls return the same group.
///
/// ```
/// let group = lazulite::distributed::init(false, "any").unwrap();
/// assert_eq!(lazulite::distributed::init(false, "any").unwrap().size(), group.size());
/// assert!(lazulite::distributed::init(false, "carrier-pigeon").is_err());
/// ```
pub fn init(strict: bool, backend: &str) -> Result<Group> {
    if !BACKENDS.contains(&backend) {
        return Err(Error::value(format!(
            "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', \
             'jaccl' and 'ring' but '{backend}' was provided."
        )));
    }
    let mut world_group = WORLD.lock().unwrap_or_else(|e| e.into_inner());
    if let (Some(g), "any" | "mpi") = (world_group.as_ref(), backend) {
        return Ok(g.clone());
    }
    let world = if matches!(backend, "any" | "mpi") && mpi::launched_with_peers() {
        match mpi::init() {
            Ok(comm) => Some(comm),
            Err(e) if strict => return Err(e),
            Err(_) => None,
        }
    } else {
        None
    };
    let group = match world {
        Some(comm) => Group {
            comm: Some(Arc::new(comm)),
        },
        None if strict => return Err(Error::runtime(no_group_reason(backend))),
        None => Group::singleton(),
    };
    // A group of one is not kept: a later strict call must still fail.
    if group.size() > 1 {
        *world_group = Some(group.clone());
    }
    Ok(group)
}

/// Why `init(strict=true, backend)` found no group, in MLX's words where MLX has them.
fn no_group_reason(backend: &str) -> String {
    match backend {
        "any" => "[distributed] Couldn't initialize any backend".into(),
        "mpi" if !mpi::is_available() => "[mpi] Cannot initialize MPI".into(),
        "mpi" => "[mpi] The world has a single process. Launch with mpirun to initialize \
                  the mpi backend."
            .into(),
        other => format!("[{other}] This backend is not available in lazulite; use 'mpi'."),
    }
}

fn group_or_global(group: Option<&Group>) -> Result<Group> {
    match group {
        Some(g) => Ok(g.clone()),
        None => init(false, "any"),
    }
}

/// A number that processes compare before a collective: equal when they agree on the
/// operation, shape and dtype.
fn signature(op: &str, shape: &[usize], dtype: DType) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (op, shape, dtype.name()).hash(&mut h);
    h.finish() | 2
}

/// Checks that every process of `comm` passed the same shape and dtype to `op`.
fn agree(comm: &Comm, op: &str, t: &Tensor) -> Result<()> {
    if comm.agree(signature(op, &t.shape, t.dtype))? {
        Ok(())
    } else {
        Err(Error::value(format!(
            "[{op}] The processes of the group passed arrays of different shapes or dtypes \
             (this process: shape {:?}, {}).",
            t.shape, t.dtype
        )))
    }
}

/// `all_sum`, `all_max` and `all_min`.
struct AllReduce {
    group: Group,
    reduction: Reduction,
}

impl AllReduce {
    fn op_name(&self) -> &'static str {
        match self.reduction {
            Reduction::Sum => "all_sum",
            Reduction::Max => "all_max",
            Reduction::Min => "all_min",
        }
    }

    /// Where the cotangent or tangent of an extremum goes: the elements equal to it,
    /// shared between ties across processes.
    fn extremum_share(&self, x: &Array, out: &Array, dtype: DType) -> Result<Array> {
        let hit = astype(&equal(x, out)?, dtype)?;
        let ties = all_sum(&hit, Some(&self.group))?;
        divide(&hit, &ties)
    }
}

impl Primitive for AllReduce {
    fn name(&self) -> &'static str {
        self.op_name()
    }

    fn runs_on_caller(&self) -> bool {
        true
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = inputs.pop().expect("one input");
        let comm = self.group.comm(self.op_name())?;
        agree(comm, self.op_name(), &x)?;
        let x = contiguous(x)?;
        if x.is_donatable(x.dtype) {
            let mut out = x;
            comm.all_reduce(None, &mut out, self.reduction)?;
            return Ok(vec![out]);
        }
        let mut out = Tensor::uninit(x.dtype, &x.shape)?;
        comm.all_reduce(Some(&x), &mut out, self.reduction)?;
        Ok(vec![out])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let g = &cotangents[0];
        Ok(vec![match self.reduction {
            Reduction::Sum => g.clone(),
            _ => multiply(g, &self.extremum_share(&inputs[0], &outputs[0], g.dtype())?)?,
        }])
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        let t = &tangents[0];
        Ok(vec![match self.reduction {
            Reduction::Sum => all_sum(t, Some(&self.group))?,
            _ => {
                let out = all_reduce(&inputs[0], Some(&self.group), self.reduction)?;
                let share = self.extremum_share(&inputs[0], &out, t.dtype())?;
                all_sum(&multiply(t, &share)?, Some(&self.group))?
            }
        }])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let out = all_reduce(&inputs[0], Some(&self.group), self.reduction)?;
        Ok((vec![out], axes.to_vec()))
    }
}

fn all_reduce(x: &Array, group: Option<&Group>, reduction: Reduction) -> Result<Array> {
    let group = group_or_global(group)?;
    if group.size() == 1 {
        return Ok(x.clone());
    }
    Ok(Array::from_op(
        AllReduce { group, reduction },
        vec![x.clone()],
        x.shape().to_vec(),
        x.dtype(),
    ))
}

/// The element-wise sum of `x` over the processes of `group` (the global group when
/// `None`). In a group of one, `x` itself.
///
/// ```
/// use lazulite::{distributed, Array};
/// let x = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// let n = distributed::init(false, "any").unwrap().size() as i32;
/// assert_eq!(distributed::all_sum(&x, None).unwrap().to_vec::<i32>().unwrap(), vec![n, 2 * n]);
/// ```
pub fn all_sum(x: &Array, group: Option<&Group>) -> Result<Array> {
    all_reduce(x, group, Reduction::Sum)
}

/// The element-wise maximum of `x` over the processes of `group`.
///
/// ```
/// use lazulite::{distributed, Array};
/// let x = Array::from_slice(&[1.0f32, -2.0], &[2]).unwrap();
/// assert_eq!(distributed::all_max(&x, None).unwrap().shape(), &[2]);
/// ```
pub fn all_max(x: &Array, group: Option<&Group>) -> Result<Array> {
    all_reduce(x, group, Reduction::Max)
}

/// The element-wise minimum of `x` over the processes of `group`.
///
/// ```
/// use lazulite::{distributed, Array};
/// let x = Array::from_slice(&[1.0f32, -2.0], &[2]).unwrap();
/// assert_eq!(distributed::all_min(&x, None).unwrap().shape(), &[2]);
/// ```
pub fn all_min(x: &Array, group: Option<&Group>) -> Result<Array> {
    all_reduce(x, group, Reduction::Min)
}

/// `all_gather`.
struct AllGather {
    group: Group,
}

impl Primitive for AllGather {
    fn name(&self) -> &'static str {
        "all_gather"
    }

    fn runs_on_caller(&self) -> bool {
        true
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = contiguous(inputs.pop().expect("one input"))?;
        let comm = self.group.comm("all_gather")?;
        agree(comm, "all_gather", &x)?;
        let mut out = Tensor::uninit(x.dtype, &outputs[0].shape)?;
        comm.all_gather(&x, &mut out)?;
        Ok(vec![out])
    }

    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        _: &[usize],
    ) -> Result<Vec<Array>> {
        let x = &inputs[0];
        let n = x.shape().first().copied().unwrap_or(1) as i64;
        let start = self.group.rank() as i64 * n;
        let block = slice_axis(&cotangents[0], 0, start, start + n, 1)?;
        Ok(vec![if x.ndim() == 0 {
            squeeze(&block, 0)?
        } else {
            block
        }])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![all_gather(&tangents[0], Some(&self.group))?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let (x, out_axis) = batch_to_second(&inputs[0], axes[0])?;
        Ok((vec![all_gather(&x, Some(&self.group))?], vec![out_axis]))
    }
}

/// For batching ops that concatenate or split along the first axis: `x` with its batch
/// axis second (a 0-d example gains a leading axis of one first), and the batch axis
/// of the result.
fn batch_to_second(x: &Array, axis: Option<usize>) -> Result<(Array, Option<usize>)> {
    let Some(axis) = axis else {
        return Ok((x.clone(), None));
    };
    let front = batch_to_front(x, Some(axis))?;
    if front.ndim() == 1 {
        return Ok((expand_dims(&front, 0)?, Some(1)));
    }
    let mut perm: Vec<i32> = (0..front.ndim() as i32).collect();
    perm.swap(0, 1);
    Ok((crate::ops::view::transpose(&front, &perm)?, Some(1)))
}

/// The `x` of every process of `group`, concatenated along the first axis in rank
/// order (a 0-d `x` gives a vector). In a group of one, `x` itself.
///
/// ```
/// use lazulite::{distributed, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0], &[1, 2]).unwrap();
/// let n = distributed::init(false, "any").unwrap().size();
/// assert_eq!(distributed::all_gather(&x, None).unwrap().shape(), &[n, 2]);
/// ```
pub fn all_gather(x: &Array, group: Option<&Group>) -> Result<Array> {
    let group = group_or_global(group)?;
    if group.size() == 1 {
        return Ok(x.clone());
    }
    let mut shape = x.shape().to_vec();
    match shape.first_mut() {
        Some(d) => *d *= group.size(),
        None => shape.push(group.size()),
    }
    let dtype = x.dtype();
    Ok(Array::from_op(
        AllGather { group },
        vec![x.clone()],
        shape,
        dtype,
    ))
}

/// `sum_scatter`.
struct SumScatter {
    group: Group,
}

impl Primitive for SumScatter {
    fn name(&self) -> &'static str {
        "sum_scatter"
    }

    fn runs_on_caller(&self) -> bool {
        true
    }

    fn eval(&self, mut inputs: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = contiguous(inputs.pop().expect("one input"))?;
        let comm = self.group.comm("sum_scatter")?;
        agree(comm, "sum_scatter", &x)?;
        let mut out = Tensor::uninit(x.dtype, &outputs[0].shape)?;
        comm.reduce_scatter(&x, &mut out, Reduction::Sum)?;
        Ok(vec![out])
    }

    fn jvp(&self, _: &[Array], tangents: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Ok(vec![sum_scatter(&tangents[0], Some(&self.group))?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        if axes[0].is_some() && inputs[0].ndim() == 1 {
            return Err(Error::value(
                "[sum_scatter] Each example must have at least one dimension.",
            ));
        }
        let (x, out_axis) = batch_to_second(&inputs[0], axes[0])?;
        Ok((vec![sum_scatter(&x, Some(&self.group))?], vec![out_axis]))
    }

    // MLX has no derivative of a reduce-scatter either.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }
}

/// The sum of `x` over the processes of `group`, of which this process keeps block
/// `rank` of `size` equal blocks along the first axis (`x.shape()[0]` must divide by
/// the group's size). In a group of one, `x` itself.
///
/// ```
/// use lazulite::{distributed, Array};
/// let n = distributed::init(false, "any").unwrap().size();
/// let x = lazulite::ones(&[2 * n, 3], lazulite::DType::Float32).unwrap();
/// assert_eq!(distributed::sum_scatter(&x, None).unwrap().shape(), &[2, 3]);
/// ```
pub fn sum_scatter(x: &Array, group: Option<&Group>) -> Result<Array> {
    let group = group_or_global(group)?;
    if group.size() == 1 {
        return Ok(x.clone());
    }
    let size = group.size();
    let mut shape = x.shape().to_vec();
    match shape.first_mut() {
        Some(d) if *d % size == 0 => *d /= size,
        _ => {
            return Err(Error::value(format!(
                "[sum_scatter] Invalid shape={:?} for a group of size {size}. The first \
                 dimension (axis 0) must be divisible by the group size and the input must \
                 have at least one dimension.",
                x.shape()
            )))
        }
    }
    let dtype = x.dtype();
    Ok(Array::from_op(
        SumScatter { group },
        vec![x.clone()],
        shape,
        dtype,
    ))
}

/// `send`: passes its input through once it has been handed to MPI.
struct Send {
    group: Group,
    dst: usize,
}

impl Primitive for Send {
    fn name(&self) -> &'static str {
        "send"
    }

    fn runs_on_caller(&self) -> bool {
        true
    }

    fn params(&self) -> String {
        format!("dst={}", self.dst)
    }

    fn eval(&self, mut inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let x = contiguous(inputs.pop().expect("one input"))?;
        self.group.comm("send")?.send(&x, self.dst)?;
        Ok(vec![x])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        let out = send(&inputs[0], self.dst as i64, Some(&self.group))?;
        Ok((vec![out], axes.to_vec()))
    }

    // MLX has no derivative of a send either.
    fn vjp(&self, _: &[Array], _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("vjp", self.name()))
    }

    fn jvp(&self, _: &[Array], _: &[Array], _: &[usize]) -> Result<Vec<Array>> {
        Err(no_rule("jvp", self.name()))
    }
}

/// The group, checked to have more than one process and a rank `peer` (MLX's errors).
fn peer_group(group: Option<&Group>, peer: i64, role: &str) -> Result<(Group, usize)> {
    let group = group_or_global(group)?;
    if group.size() == 1 {
        let op = if role == "source" {
            "recv from"
        } else {
            "send to"
        };
        return Err(Error::value(format!("Cannot {op} a singleton group")));
    }
    match usize::try_from(peer) {
        Ok(p) if p < group.size() => Ok((group, p)),
        _ => Err(Error::value(format!(
            "Invalid {role}={peer} for a group of size {}",
            group.size()
        ))),
    }
}

/// An array equal to `x` whose evaluation sends `x` to process `dst` of `group`. The
/// send does not wait for the receiver: a process may send and then receive in one
/// evaluation without deadlocking.
///
/// ```
/// use lazulite::{distributed, Array};
/// let x = Array::from_slice(&[1.0f32], &[1]).unwrap();
/// if distributed::init(false, "any").unwrap().size() == 1 {
///     assert!(distributed::send(&x, 0, None).is_err()); // nobody to send to
/// }
/// ```
pub fn send(x: &Array, dst: i64, group: Option<&Group>) -> Result<Array> {
    let (group, dst) = peer_group(group, dst, "destination")?;
    Ok(Array::from_op(
        Send { group, dst },
        vec![x.clone()],
        x.shape().to_vec(),
        x.dtype(),
    ))
}

/// `recv`: no inputs; its output arrives from another process.
struct Recv {
    group: Group,
    src: usize,
}

impl Primitive for Recv {
    fn name(&self) -> &'static str {
        "recv"
    }

    fn runs_on_caller(&self) -> bool {
        true
    }

    fn params(&self) -> String {
        format!("src={}", self.src)
    }

    fn eval(&self, _: Vec<Tensor>, outputs: &[OutputSpec]) -> Result<Vec<Tensor>> {
        let mut out = Tensor::uninit(outputs[0].dtype, &outputs[0].shape)?;
        self.group.comm("recv")?.recv(&mut out, self.src)?;
        Ok(vec![out])
    }

    // MLX has no derivative or batching of a receive either.
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

/// An array of `shape` and `dtype` received from process `src` of `group` when
/// evaluated. The sender's array must have as many bytes (else a value error).
///
/// ```
/// use lazulite::{distributed, DType};
/// if distributed::init(false, "any").unwrap().size() == 1 {
///     assert!(distributed::recv(&[2], DType::Float32, 0, None).is_err());
/// }
/// ```
pub fn recv(shape: &[usize], dtype: DType, src: i64, group: Option<&Group>) -> Result<Array> {
    let (group, src) = peer_group(group, src, "source")?;
    crate::shape::checked_size(shape)?;
    Ok(Array::from_op(
        Recv { group, src },
        vec![],
        shape.to_vec(),
        dtype,
    ))
}

/// [`recv`] of an array shaped like `x`, of its dtype.
///
/// ```
/// use lazulite::{distributed, Array};
/// let x = Array::from_slice(&[1.0f32], &[1]).unwrap();
/// if distributed::init(false, "any").unwrap().size() == 1 {
///     assert!(distributed::recv_like(&x, 0, None).is_err());
/// }
/// ```
pub fn recv_like(x: &Array, src: i64, group: Option<&Group>) -> Result<Array> {
    recv(x.shape(), x.dtype(), src, group)
}
