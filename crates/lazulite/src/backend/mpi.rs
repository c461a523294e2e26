//! Open MPI, loaded at run time: the engine under `lazulite::distributed`.
//!
//! The library is opened with `dlopen` when a group is first initialised, so lazulite
//! builds, imports and runs on machines without MPI. Only Open MPI's ABI is supported:
//! its handles (communicators, datatypes, reduction ops) are addresses of exported
//! objects (`ompi_mpi_comm_world`, `ompi_mpi_float`, ...), which `dlsym` finds. The
//! library name is `libmpi.so` unless `MLX_MPI_LIBNAME` (MLX's variable) or
//! `LAZULITE_MPI_LIBNAME` names another.
//!
//! Every call goes through one lock (MPI runs in its serialised threading mode), errors
//! are returned rather than aborting the job (`MPI_ERRORS_RETURN`), and counts above
//! `i32::MAX` are split into several calls. Sends are non-blocking: a process whose
//! evaluation sends and then receives never waits on its own send, whatever the message
//! size. Pending sends complete before MPI is finalised at exit.

use super::Tensor;
use crate::dtype::DType;
use crate::element::Complex;
use crate::error::{Error, Result};
use half::{bf16, f16};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// An Open MPI handle: the address of a library object (`MPI_Comm`, `MPI_Datatype`,
/// `MPI_Op`, `MPI_Request`, `MPI_Errhandler`).
type Handle = *mut c_void;

const MPI_SUCCESS: c_int = 0;
/// Open MPI's `MPI_ERR_TRUNCATE`: a message longer than the receive buffer.
const MPI_ERR_TRUNCATE: c_int = 15;
const MPI_THREAD_SERIALIZED: c_int = 2;
const MPI_MAX_STRING: usize = 256;
/// Open MPI's `MPI_IN_PLACE`.
const IN_PLACE: *const c_void = std::ptr::without_provenance(1);
const RTLD_NOW: c_int = 2;
const RTLD_GLOBAL: c_int = 0x100;
/// Elements per MPI call: counts are C `int`s.
const CHUNK: usize = 1 << 30;

/// Open MPI's `MPI_Status` (only the count field is read, through `MPI_Get_count`).
#[repr(C)]
#[derive(Default)]
struct Status {
    source: c_int,
    tag: c_int,
    error: c_int,
    cancelled: c_int,
    ucount: usize,
}

type UserFunction = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut Handle);

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
    fn atexit(callback: extern "C" fn()) -> c_int;
}

/// The functions and objects of the library that lazulite uses.
struct Api {
    init_thread: unsafe extern "C" fn(*mut c_int, *mut c_void, c_int, *mut c_int) -> c_int,
    finalize: unsafe extern "C" fn() -> c_int,
    initialized: unsafe extern "C" fn(*mut c_int) -> c_int,
    finalized: unsafe extern "C" fn(*mut c_int) -> c_int,
    comm_rank: unsafe extern "C" fn(Handle, *mut c_int) -> c_int,
    comm_size: unsafe extern "C" fn(Handle, *mut c_int) -> c_int,
    comm_split: unsafe extern "C" fn(Handle, c_int, c_int, *mut Handle) -> c_int,
    comm_free: unsafe extern "C" fn(*mut Handle) -> c_int,
    comm_set_errhandler: unsafe extern "C" fn(Handle, Handle) -> c_int,
    allreduce:
        unsafe extern "C" fn(*const c_void, *mut c_void, c_int, Handle, Handle, Handle) -> c_int,
    allgather: unsafe extern "C" fn(
        *const c_void,
        c_int,
        Handle,
        *mut c_void,
        c_int,
        Handle,
        Handle,
    ) -> c_int,
    reduce_scatter_block:
        unsafe extern "C" fn(*const c_void, *mut c_void, c_int, Handle, Handle, Handle) -> c_int,
    isend: unsafe extern "C" fn(
        *const c_void,
        c_int,
        Handle,
        c_int,
        c_int,
        Handle,
        *mut Handle,
    ) -> c_int,
    recv: unsafe extern "C" fn(
        *mut c_void,
        c_int,
        Handle,
        c_int,
        c_int,
        Handle,
        *mut Status,
    ) -> c_int,
    get_count: unsafe extern "C" fn(*const Status, Handle, *mut c_int) -> c_int,
    test: unsafe extern "C" fn(*mut Handle, *mut c_int, *mut Status) -> c_int,
    wait: unsafe extern "C" fn(*mut Handle, *mut Status) -> c_int,
    type_contiguous: unsafe extern "C" fn(c_int, Handle, *mut Handle) -> c_int,
    type_commit: unsafe extern "C" fn(*mut Handle) -> c_int,
    op_create: unsafe extern "C" fn(UserFunction, c_int, *mut Handle) -> c_int,
    error_string: unsafe extern "C" fn(c_int, *mut c_char, *mut c_int) -> c_int,
    get_library_version: unsafe extern "C" fn(*mut c_char, *mut c_int) -> c_int,
    comm_world: Handle,
    errors_return: Handle,
    byte: Handle,
    types: [Handle; 12],
    op_sum: Handle,
    op_max: Handle,
    op_min: Handle,
    op_lor: Handle,
    op_land: Handle,
}

/// Datatypes MPI has built in, in the order of `Api::types`.
const BUILTIN_TYPES: [(DType, &str); 12] = [
    (DType::Bool, "ompi_mpi_c_bool"),
    (DType::Int8, "ompi_mpi_int8_t"),
    (DType::UInt8, "ompi_mpi_uint8_t"),
    (DType::Int16, "ompi_mpi_int16_t"),
    (DType::UInt16, "ompi_mpi_uint16_t"),
    (DType::Int32, "ompi_mpi_int32_t"),
    (DType::UInt32, "ompi_mpi_uint32_t"),
    (DType::Int64, "ompi_mpi_int64_t"),
    (DType::UInt64, "ompi_mpi_uint64_t"),
    (DType::Float32, "ompi_mpi_float"),
    (DType::Float64, "ompi_mpi_double"),
    (DType::Complex64, "ompi_mpi_c_float_complex"),
];

/// Objects created after `MPI_Init`: the types and reductions MPI lacks.
struct Custom {
    /// Two bytes: float16 and bfloat16.
    half: Handle,
    /// Sum, max, min of float16; of bfloat16; max, min of complex64.
    f16_ops: [Handle; 3],
    bf16_ops: [Handle; 3],
    complex_ops: [Handle; 2],
    /// Sums of int8, uint8, int16, uint16: Open MPI's vectorised built-in sums of
    /// these saturate on some versions (4.1.4 here) where C and NumPy wrap around.
    small_int_sums: [Handle; 4],
}

struct Library {
    api: Api,
    custom: OnceLock<Custom>,
}

impl Library {
    /// The objects made by `init`; every caller holds a `Comm`, so they exist.
    fn custom(&self) -> &Custom {
        self.custom
            .get()
            .expect("MPI is initialised before any communicator exists")
    }
}

// SAFETY: the handles are addresses of objects inside the loaded library, used only
// under `LOCK`.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

static LIBRARY: OnceLock<std::result::Result<Library, String>> = OnceLock::new();
/// Serialises every MPI call (the library runs in `MPI_THREAD_SERIALIZED` mode).
static LOCK: Mutex<()> = Mutex::new(());
/// Sends still in flight, with the buffers they read from.
static PENDING: Mutex<Vec<PendingSend>> = Mutex::new(Vec::new());

struct PendingSend {
    request: Handle,
    _data: Arc<super::buffer::Buffer>,
}

// SAFETY: a request handle is an address inside the library, used only under `LOCK`.
unsafe impl Send for PendingSend {}

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn library_name() -> String {
    ["LAZULITE_MPI_LIBNAME", "MLX_MPI_LIBNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "libmpi.so".into())
}

fn load() -> std::result::Result<Library, String> {
    let name = library_name();
    let names = if name == "libmpi.so" {
        vec![name, "libmpi.so.40".into()]
    } else {
        vec![name]
    };
    let mut handle = std::ptr::null_mut();
    let mut last_error = String::new();
    for name in &names {
        let c = CString::new(name.as_str()).map_err(|_| format!("bad library name {name:?}"))?;
        // SAFETY: dlopen with a valid C string; RTLD_GLOBAL lets Open MPI's own plugins
        // find the library's symbols.
        handle = unsafe { dlopen(c.as_ptr(), RTLD_NOW | RTLD_GLOBAL) };
        if !handle.is_null() {
            break;
        }
        last_error = dl_error();
    }
    if handle.is_null() {
        return Err(format!(
            "could not load {}: {last_error}",
            names.join(" or ")
        ));
    }
    let symbol = |name: &str| -> std::result::Result<*mut c_void, String> {
        let c = CString::new(name).expect("symbol names have no NUL");
        // SAFETY: handle is a live dlopen handle.
        let p = unsafe { dlsym(handle, c.as_ptr()) };
        if p.is_null() {
            Err(format!("{name} not found ({})", dl_error()))
        } else {
            Ok(p)
        }
    };
    macro_rules! function {
        ($name:literal) => {
            // SAFETY: the symbol is the MPI function of that name, whose C signature
            // is the field's type.
            unsafe { as_function(symbol($name)?) }
        };
    }
    let mut types = [std::ptr::null_mut(); 12];
    for (slot, (_, name)) in types.iter_mut().zip(BUILTIN_TYPES) {
        *slot = symbol(name)?;
    }
    let api = Api {
        init_thread: function!("MPI_Init_thread"),
        finalize: function!("MPI_Finalize"),
        initialized: function!("MPI_Initialized"),
        finalized: function!("MPI_Finalized"),
        comm_rank: function!("MPI_Comm_rank"),
        comm_size: function!("MPI_Comm_size"),
        comm_split: function!("MPI_Comm_split"),
        comm_free: function!("MPI_Comm_free"),
        comm_set_errhandler: function!("MPI_Comm_set_errhandler"),
        allreduce: function!("MPI_Allreduce"),
        allgather: function!("MPI_Allgather"),
        reduce_scatter_block: function!("MPI_Reduce_scatter_block"),
        isend: function!("MPI_Isend"),
        recv: function!("MPI_Recv"),
        get_count: function!("MPI_Get_count"),
        test: function!("MPI_Test"),
        wait: function!("MPI_Wait"),
        type_contiguous: function!("MPI_Type_contiguous"),
        type_commit: function!("MPI_Type_commit"),
        op_create: function!("MPI_Op_create"),
        error_string: function!("MPI_Error_string"),
        get_library_version: function!("MPI_Get_library_version"),
        comm_world: symbol("ompi_mpi_comm_world")?,
        errors_return: symbol("ompi_mpi_errors_return")?,
        byte: symbol("ompi_mpi_byte")?,
        types,
        op_sum: symbol("ompi_mpi_op_sum")?,
        op_max: symbol("ompi_mpi_op_max")?,
        op_min: symbol("ompi_mpi_op_min")?,
        op_lor: symbol("ompi_mpi_op_lor")?,
        op_land: symbol("ompi_mpi_op_land")?,
    };
    let mut version = [0 as c_char; MPI_MAX_STRING];
    let mut len = 0;
    // SAFETY: the buffer has MPI_MAX_LIBRARY_VERSION_STRING bytes.
    unsafe { (api.get_library_version)(version.as_mut_ptr(), &mut len) };
    // SAFETY: MPI writes a NUL-terminated string.
    let version = unsafe { CStr::from_ptr(version.as_ptr()) }.to_string_lossy();
    if !version.contains("Open MPI") {
        return Err(format!("the MPI library is not Open MPI ({version})"));
    }
    Ok(Library {
        api,
        custom: OnceLock::new(),
    })
}

/// A function pointer of type `F` from a symbol's address.
///
/// # Safety
/// `p` must be the address of a function whose C signature is `F`.
unsafe fn as_function<F: Copy>(p: *mut c_void) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: same size; the caller guarantees the signature.
    unsafe { std::mem::transmute_copy(&p) }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message.
    let e = unsafe { dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: checked non-null above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn library() -> Result<&'static Library> {
    LIBRARY
        .get_or_init(load)
        .as_ref()
        .map_err(|e| Error::runtime(format!("[mpi] MPI is not available: {e}.")))
}

/// Whether an Open MPI library can be loaded.
pub fn is_available() -> bool {
    library().is_ok()
}

/// Whether this process was started by `mpirun` (or another Open MPI launcher) as one of
/// several processes: only then does initialising MPI give a group larger than one.
pub fn launched_with_peers() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .any(|s| s.parse::<usize>().is_ok_and(|n| n > 1))
}

fn check(lib: &Library, code: c_int, what: &str) -> Result<()> {
    if code == MPI_SUCCESS {
        return Ok(());
    }
    let mut text = [0 as c_char; MPI_MAX_STRING];
    let mut len = 0;
    // SAFETY: the buffer has MPI_MAX_ERROR_STRING bytes.
    let described = unsafe { (lib.api.error_string)(code, text.as_mut_ptr(), &mut len) };
    let message = if described == MPI_SUCCESS {
        // SAFETY: MPI wrote a NUL-terminated string.
        unsafe { CStr::from_ptr(text.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    } else {
        format!("error code {code}")
    };
    Err(Error::runtime(format!("[{what}] MPI failed: {message}.")))
}

/// A communicator: the world's, or one made by [`Comm::split`] (freed on drop).
pub struct Comm {
    handle: Handle,
    owned: bool,
    rank: usize,
    size: usize,
}

// SAFETY: a communicator handle is used only under `LOCK`.
unsafe impl Send for Comm {}
unsafe impl Sync for Comm {}

/// Initialises MPI (once per process) and returns the world communicator.
pub fn init() -> Result<Comm> {
    let lib = library()?;
    let _guard = lock();
    if finalized(lib) {
        return Err(Error::runtime("[mpi] MPI was already finalised."));
    }
    if lib.custom.get().is_none() {
        let mut already = 0;
        // SAFETY: MPI_Initialized may be called at any time.
        check(lib, unsafe { (lib.api.initialized)(&mut already) }, "init")?;
        // Another library of this process (mpi4py, say) may have initialised MPI: then
        // it owns MPI_Finalize too.
        if already == 0 {
            let mut provided = 0;
            // SAFETY: MPI_Init_thread accepts null argc/argv.
            let code = unsafe {
                (lib.api.init_thread)(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    MPI_THREAD_SERIALIZED,
                    &mut provided,
                )
            };
            check(lib, code, "init")?;
            // SAFETY: registering a plain function.
            unsafe { atexit(finalize_at_exit) };
        }
        // SAFETY: both handles come from the library.
        let code =
            unsafe { (lib.api.comm_set_errhandler)(lib.api.comm_world, lib.api.errors_return) };
        check(lib, code, "init")?;
        let custom = create_custom(lib)?;
        let _ = lib.custom.set(custom);
    }
    comm_from(lib, lib.api.comm_world, false)
}

fn comm_from(lib: &Library, handle: Handle, owned: bool) -> Result<Comm> {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: handle is a live communicator.
    check(
        lib,
        unsafe { (lib.api.comm_rank)(handle, &mut rank) },
        "rank",
    )?;
    check(
        lib,
        unsafe { (lib.api.comm_size)(handle, &mut size) },
        "size",
    )?;
    Ok(Comm {
        handle,
        owned,
        rank: rank as usize,
        size: size as usize,
    })
}

fn create_custom(lib: &Library) -> Result<Custom> {
    let api = &lib.api;
    let mut half = std::ptr::null_mut();
    // SAFETY: building and committing a type of two bytes.
    check(
        lib,
        unsafe { (api.type_contiguous)(2, api.byte, &mut half) },
        "init",
    )?;
    check(lib, unsafe { (api.type_commit)(&mut half) }, "init")?;
    let op = |f: UserFunction| -> Result<Handle> {
        let mut op = std::ptr::null_mut();
        // SAFETY: f has MPI_User_function's signature; the ops are commutative.
        check(lib, unsafe { (api.op_create)(f, 1, &mut op) }, "init")?;
        Ok(op)
    };
    Ok(Custom {
        half,
        f16_ops: [
            op(combine::<f16, SUM>)?,
            op(combine::<f16, MAX>)?,
            op(combine::<f16, MIN>)?,
        ],
        bf16_ops: [
            op(combine::<bf16, SUM>)?,
            op(combine::<bf16, MAX>)?,
            op(combine::<bf16, MIN>)?,
        ],
        complex_ops: [op(combine::<Complex, MAX>)?, op(combine::<Complex, MIN>)?],
        small_int_sums: [
            op(combine::<i8, SUM>)?,
            op(combine::<u8, SUM>)?,
            op(combine::<i16, SUM>)?,
            op(combine::<u16, SUM>)?,
        ],
    })
}

const SUM: u8 = 0;
const MAX: u8 = 1;
const MIN: u8 = 2;

/// An `MPI_User_function` combining `len` elements of `T` into `inout`, with lazulite's
/// own arithmetic (NaN-propagating max/min, as `maximum`/`minimum`).
unsafe extern "C" fn combine<T: crate::backend::cpu::binary::Arith, const OP: u8>(
    input: *mut c_void,
    inout: *mut c_void,
    len: *mut c_int,
    _: *mut Handle,
) {
    // SAFETY: MPI passes two arrays of `*len` elements of the op's datatype, which has
    // T's size; storage types are plain data.
    let n = unsafe { *len } as usize;
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(input as *const T::Storage, n),
            std::slice::from_raw_parts_mut(inout as *mut T::Storage, n),
        )
    };
    for (x, acc) in a.iter().zip(b.iter_mut()) {
        let (x, y) = (T::load(*x), T::load(*acc));
        *acc = match OP {
            SUM => y.add(x),
            MAX => y.max(x),
            _ => y.min(x),
        }
        .store();
    }
}

/// Whether `MPI_Finalize` ran (ours, or that of another library sharing MPI): nothing
/// may be called after it.
fn finalized(lib: &Library) -> bool {
    let mut done = 0;
    // SAFETY: MPI_Finalized may be called at any time.
    unsafe { (lib.api.finalized)(&mut done) };
    done != 0
}

extern "C" fn finalize_at_exit() {
    let Ok(lib) = library() else { return };
    let _guard = lock();
    if finalized(lib) {
        return;
    }
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    for send in pending.iter_mut() {
        // SAFETY: a live request; its buffer is still held.
        unsafe { (lib.api.wait)(&mut send.request, std::ptr::null_mut()) };
    }
    pending.clear();
    // SAFETY: called once, after every other MPI call of this process.
    unsafe { (lib.api.finalize)() };
}

/// A reduction of [`Comm::all_reduce`] and [`Comm::reduce_scatter`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Max,
    Min,
}

impl Reduction {
    fn index(self) -> usize {
        match self {
            Reduction::Sum => 0,
            Reduction::Max => 1,
            Reduction::Min => 2,
        }
    }
}

/// The MPI datatype whose elements are `dtype`'s.
fn datatype(lib: &Library, dtype: DType) -> Handle {
    match dtype {
        DType::Float16 | DType::BFloat16 => lib.custom().half,
        _ => {
            let i = BUILTIN_TYPES
                .iter()
                .position(|(d, _)| *d == dtype)
                .expect("every other dtype is built in");
            lib.api.types[i]
        }
    }
}

/// The MPI op reducing `dtype` by `reduction`. Booleans reduce as logical or (sum, max)
/// and logical and (min): the values a sum or extremum cast back to bool has.
fn reduction_op(lib: &Library, dtype: DType, reduction: Reduction) -> Handle {
    let custom = lib.custom();
    let api = &lib.api;
    match (dtype, reduction) {
        (DType::Float16, r) => custom.f16_ops[r.index()],
        (DType::BFloat16, r) => custom.bf16_ops[r.index()],
        (DType::Int8, Reduction::Sum) => custom.small_int_sums[0],
        (DType::UInt8, Reduction::Sum) => custom.small_int_sums[1],
        (DType::Int16, Reduction::Sum) => custom.small_int_sums[2],
        (DType::UInt16, Reduction::Sum) => custom.small_int_sums[3],
        (DType::Complex64, Reduction::Max) => custom.complex_ops[0],
        (DType::Complex64, Reduction::Min) => custom.complex_ops[1],
        (DType::Bool, Reduction::Min) => api.op_land,
        (DType::Bool, _) => api.op_lor,
        (_, Reduction::Sum) => api.op_sum,
        (_, Reduction::Max) => api.op_max,
        (_, Reduction::Min) => api.op_min,
    }
}

/// The address of element `start` of a contiguous tensor.
fn read_ptr(t: &Tensor, start: usize) -> *const c_void {
    debug_assert!(t.is_contiguous());
    // SAFETY: offset + start lies within the buffer for a non-empty tensor; the pointer
    // is only passed to MPI with a count that stays inside it.
    unsafe {
        t.buf
            .as_ptr()
            .add((t.offset + start) * t.dtype.size())
            .cast()
    }
}

/// The address of element `start` of a contiguous tensor whose buffer nobody else holds.
fn write_ptr(t: &mut Tensor, start: usize) -> *mut c_void {
    debug_assert!(t.is_contiguous());
    let at = (t.offset + start) * t.dtype.size();
    let buf = Arc::get_mut(&mut t.buf).expect("an output buffer is held only by its tensor");
    // SAFETY: as in read_ptr.
    unsafe { buf.as_mut_ptr().add(at).cast() }
}

/// `(start, count)` pieces of `n` elements, each small enough for a C `int` count.
fn chunks(n: usize) -> impl Iterator<Item = (usize, c_int)> {
    (0..n)
        .step_by(CHUNK)
        .map(move |start| (start, (n - start).min(CHUNK) as c_int))
}

/// A zeroed scratch buffer of `bytes`, allocated fallibly.
fn scratch(bytes: usize) -> Result<Vec<u8>> {
    let mut v = crate::error::vec_with_room(bytes, "mpi")?;
    v.resize(bytes, 0);
    Ok(v)
}

impl Comm {
    /// This process's rank in the communicator.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes in the communicator.
    pub fn size(&self) -> usize {
        self.size
    }

    /// A new communicator of the processes that passed the same `color`, ranked by `key`
    /// (collective: every process of this one must call it).
    pub fn split(&self, color: i32, key: i32) -> Result<Comm> {
        let lib = library()?;
        let _guard = lock();
        let mut handle = std::ptr::null_mut();
        // SAFETY: a live communicator; the new handle is written by MPI.
        let code = unsafe { (lib.api.comm_split)(self.handle, color, key, &mut handle) };
        check(lib, code, "split")?;
        // SAFETY: both handles come from the library.
        let code = unsafe { (lib.api.comm_set_errhandler)(handle, lib.api.errors_return) };
        check(lib, code, "split")?;
        comm_from(lib, handle, true)
    }

    /// Whether every process passed the same `value` (collective). Used before each
    /// collective so that processes that disagree on shapes or dtypes all get an error
    /// instead of some of them waiting forever.
    pub fn agree(&self, value: u64) -> Result<bool> {
        let lib = library()?;
        let v = (value >> 1) as i64;
        let local = [v, -v];
        let mut out = [0i64; 2];
        let int64 = lib.api.types[7];
        let _guard = lock();
        // SAFETY: two int64 in, two out.
        let code = unsafe {
            (lib.api.allreduce)(
                local.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                2,
                int64,
                lib.api.op_max,
                self.handle,
            )
        };
        check(lib, code, "agree")?;
        Ok(out[0] == v && -out[1] == v)
    }

    /// Reduces `input` (or, when `None`, `output`'s own data, in place) element-wise
    /// over the processes into `output`. Both are contiguous, of one shape and dtype.
    pub fn all_reduce(
        &self,
        input: Option<&Tensor>,
        output: &mut Tensor,
        reduction: Reduction,
    ) -> Result<()> {
        let lib = library()?;
        let (dtype, op) = (
            datatype(lib, output.dtype),
            reduction_op(lib, output.dtype, reduction),
        );
        let _guard = lock();
        for (start, count) in chunks(output.size()) {
            let send = input.map_or(IN_PLACE, |t| read_ptr(t, start));
            let recv = write_ptr(output, start);
            // SAFETY: `count` elements of the datatype at each address.
            let code = unsafe { (lib.api.allreduce)(send, recv, count, dtype, op, self.handle) };
            check(lib, code, "all_reduce")?;
        }
        Ok(())
    }

    /// Concatenates every process's `input` along a new leading block into `output`
    /// (`size` times as many elements, in rank order).
    pub fn all_gather(&self, input: &Tensor, output: &mut Tensor) -> Result<()> {
        let lib = library()?;
        let dtype = datatype(lib, input.dtype);
        let (n, item) = (input.size(), input.dtype.size());
        let _guard = lock();
        if n <= CHUNK {
            // SAFETY: n elements in, size * n out.
            let code = unsafe {
                (lib.api.allgather)(
                    read_ptr(input, 0),
                    n as c_int,
                    dtype,
                    write_ptr(output, 0),
                    n as c_int,
                    dtype,
                    self.handle,
                )
            };
            return check(lib, code, "all_gather");
        }
        let mut gathered = scratch(CHUNK * item * self.size)?;
        for (start, count) in chunks(n) {
            // SAFETY: count elements in, size * count out into the scratch buffer.
            let code = unsafe {
                (lib.api.allgather)(
                    read_ptr(input, start),
                    count,
                    dtype,
                    gathered.as_mut_ptr().cast(),
                    count,
                    dtype,
                    self.handle,
                )
            };
            check(lib, code, "all_gather")?;
            let piece = count as usize * item;
            for rank in 0..self.size {
                let dst = write_ptr(output, rank * n + start).cast::<u8>();
                // SAFETY: the piece fits both the scratch and the output's block.
                unsafe {
                    std::ptr::copy_nonoverlapping(gathered.as_ptr().add(rank * piece), dst, piece)
                };
            }
        }
        Ok(())
    }

    /// Reduces `input` over the processes and keeps this process's block of it: block
    /// `rank` of `size` equal blocks, into `output`.
    pub fn reduce_scatter(
        &self,
        input: &Tensor,
        output: &mut Tensor,
        reduction: Reduction,
    ) -> Result<()> {
        let lib = library()?;
        let (dtype, op) = (
            datatype(lib, input.dtype),
            reduction_op(lib, input.dtype, reduction),
        );
        let (block, item) = (output.size(), input.dtype.size());
        let _guard = lock();
        if block <= CHUNK {
            // SAFETY: size * block elements in, block out.
            let code = unsafe {
                (lib.api.reduce_scatter_block)(
                    read_ptr(input, 0),
                    write_ptr(output, 0),
                    block as c_int,
                    dtype,
                    op,
                    self.handle,
                )
            };
            return check(lib, code, "sum_scatter");
        }
        let mut gathered = scratch(CHUNK * item * self.size)?;
        for (start, count) in chunks(block) {
            let piece = count as usize * item;
            for rank in 0..self.size {
                let src = read_ptr(input, rank * block + start).cast::<u8>();
                // SAFETY: the piece fits both the input's block and the scratch.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src,
                        gathered.as_mut_ptr().add(rank * piece),
                        piece,
                    )
                };
            }
            // SAFETY: size * count elements in, count out.
            let code = unsafe {
                (lib.api.reduce_scatter_block)(
                    gathered.as_ptr().cast(),
                    write_ptr(output, start),
                    count,
                    dtype,
                    op,
                    self.handle,
                )
            };
            check(lib, code, "sum_scatter")?;
        }
        Ok(())
    }

    /// Starts sending `input`'s bytes to process `dst` and returns without waiting: the
    /// send completes in the background (the buffer is kept until it has).
    pub fn send(&self, input: &Tensor, dst: usize) -> Result<()> {
        let lib = library()?;
        let _guard = lock();
        let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        reap(lib, &mut pending);
        let bytes = input.size() * input.dtype.size();
        for (start, count) in chunks(bytes) {
            let mut request = std::ptr::null_mut();
            // SAFETY: `count` bytes from the tensor's data, which `pending` keeps alive.
            let code = unsafe {
                (lib.api.isend)(
                    read_ptr(input, 0).cast::<u8>().add(start).cast(),
                    count,
                    lib.api.byte,
                    dst as c_int,
                    0,
                    self.handle,
                    &mut request,
                )
            };
            check(lib, code, "send")?;
            pending.push(PendingSend {
                request,
                _data: input.buf.clone(),
            });
        }
        Ok(())
    }

    /// Receives `output`'s bytes from process `src`, failing if the message's size differs.
    pub fn recv(&self, output: &mut Tensor, src: usize) -> Result<()> {
        let lib = library()?;
        let _guard = lock();
        let bytes = output.size() * output.dtype.size();
        for (start, count) in chunks(bytes) {
            let mut status = Status::default();
            let at = write_ptr(output, 0).cast::<u8>();
            // SAFETY: `count` bytes of the output's buffer.
            let code = unsafe {
                (lib.api.recv)(
                    at.add(start).cast(),
                    count,
                    lib.api.byte,
                    src as c_int,
                    0,
                    self.handle,
                    &mut status,
                )
            };
            let mismatch = || {
                Error::value(format!(
                    "[recv] The message from process {src} does not have the {bytes} bytes \
                     expected: the sender's shape or dtype differs."
                ))
            };
            if code == MPI_ERR_TRUNCATE {
                return Err(mismatch());
            }
            check(lib, code, "recv")?;
            let mut received = 0;
            // SAFETY: a status filled by MPI_Recv.
            let code = unsafe { (lib.api.get_count)(&status, lib.api.byte, &mut received) };
            check(lib, code, "recv")?;
            if received != count {
                return Err(mismatch());
            }
        }
        Ok(())
    }
}

/// Forgets the sends that have completed (and frees their buffers' hold).
fn reap(lib: &Library, pending: &mut Vec<PendingSend>) {
    pending.retain_mut(|send| {
        let mut done = 0;
        // SAFETY: a live request.
        let code = unsafe { (lib.api.test)(&mut send.request, &mut done, std::ptr::null_mut()) };
        code == MPI_SUCCESS && done == 0
    });
}

impl Drop for Comm {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let Ok(lib) = library() else { return };
        let _guard = lock();
        if !finalized(lib) {
            // SAFETY: a communicator this process created and still owns.
            unsafe { (lib.api.comm_free)(&mut self.handle) };
        }
    }
}
