//! The declarative binding machinery: [`bind!`](crate::bind) turns one line per op into a
//! Python function (or `array` method) with MLX's signature, its argument conversion,
//! error mapping and an entry for the generated type stubs (a
//! [`Signature`](crate::signature::Signature)).
//!
//! A line reads like the Python signature, with a Rust type after each name:
//!
//! ```text
//! sum(a: Arr, /, axis: Option<AxesArg> = None, keepdims: bool = false, *, stream) => lz::sum(&a.0, axis.map_or(Axes::All, Axes::from), keepdims);
//! ```
//!
//! `/` and `*` are MLX's positional-only and keyword-only markers; `stream` is checked
//! (a [`StreamOrDevice`](crate::devices::StreamOrDevice): the GPU raises MLX's error) and
//! otherwise ignored (lazulite has one device); defaults are `None` or a literal. The body is any
//! expression returning a [`Returned`] value: an `Array`, a `lazulite::Result<Array>`, ...
//! A method line names the variable that holds `self`'s array: `abs[a](*, stream) => ...`.
//! `///` lines above a line become the Python docstring (`__doc__`) of that function or method.

use crate::errors::to_py_err;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// What a bound function may return; converted to a Python object.
pub trait Returned {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>>;
}

impl Returned for lazulite::Array {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(Py::new(py, crate::array::PyArray::from(self))?.into_any())
    }
}

impl Returned for Vec<lazulite::Array> {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let items = self
            .into_iter()
            .map(|a| a.into_python(py))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.into_any().unbind())
    }
}

/// A tuple of arrays (MLX returns tuples from `broadcast_arrays`, `meshgrid`, ...).
pub struct Tuple(pub Vec<lazulite::Array>);

impl Returned for Tuple {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let items = self
            .0
            .into_iter()
            .map(|a| a.into_python(py))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(pyo3::types::PyTuple::new(py, items)?.into_any().unbind())
    }
}

impl Returned for usize {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.into_pyobject(py)?.into_any().unbind())
    }
}

impl Returned for () {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(py.None())
    }
}

impl<T: Returned> Returned for lazulite::Result<T> {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.map_err(to_py_err)?.into_python(py)
    }
}

impl<T: Returned> Returned for PyResult<T> {
    fn into_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self?.into_python(py)
    }
}

/// Binds a table of functions and methods; see the [module docs](self). Expands to the
/// `#[pyfunction]`s, a `#[pymethods]` block per method, `register(module)` adding the
/// functions, and `signatures()` for the stubs.
#[macro_export]
macro_rules! bind {
    (
        functions { $( $(#[doc = $fdoc:literal])* $fname:ident ( $($fargs:tt)* ) => $fbody:expr ; )* }
        methods { $( $(#[doc = $mdoc:literal])* $mname:ident [ $this:ident ] ( $($margs:tt)* ) => $mbody:expr ; )* }
    ) => {
        $( $crate::bind!(@args (function $fname [$($fdoc)*] $fbody) [] [] [] $($fargs)* ,); )*

        $( $crate::bind!(@args (method $mname [$this] [$($mdoc)*] $mbody) [] [] [] $($margs)* ,); )*

        /// Adds this table's functions to `module`.
        pub fn register(module: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
            use pyo3::types::PyModuleMethods;
            $( module.add_function(pyo3::wrap_pyfunction!($fname, module)?)?; )*
            Ok(())
        }

        /// This table's signatures, for the stubs.
        #[allow(clippy::vec_init_then_push)]
        pub fn signatures() -> Vec<$crate::signature::Signature> {
            let mut out = Vec::new();
            $( out.push($crate::bind!(@signature $fname false $($fargs)*)); )*
            $( out.push($crate::bind!(@signature $mname true $($margs)*)); )*
            out
        }
    };

    // Parameter muncher: (what) [rust params] [pyo3 signature] [unused] remaining tokens.
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] / , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)*] [$($s)* /,] [] $($rest)*);
    };
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] * , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)*] [$($s)* *,] [] $($rest)*);
    };
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] stream , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)* stream: Option<$crate::devices::StreamOrDevice>,] [$($s)* stream = None,] [] $($rest)*);
    };
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] $n:ident : $t:ty = None , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)* $n: $t,] [$($s)* $n = None,] [] $($rest)*);
    };
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] $n:ident : $t:ty = Some($d:literal) , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)* $n: $t,] [$($s)* $n = Some($d),] [] $($rest)*);
    };
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] $n:ident : $t:ty = $d:literal , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)* $n: $t,] [$($s)* $n = $d,] [] $($rest)*);
    };
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] $n:ident : $t:ty , $($rest:tt)*) => {
        $crate::bind!(@args $what [$($p)* $n: $t,] [$($s)* $n,] [] $($rest)*);
    };
    // A trailing comma was added to every list; an empty list leaves a lone one.
    (@args $what:tt [$($p:tt)*] [$($s:tt)*] [] , ) => {
        $crate::bind!(@args $what [$($p)*] [$($s)*] []);
    };
    (@args (function $name:ident [$($doc:literal)*] $body:expr) [$($p:tt)*] [$($s:tt)*] []) => {
        $(#[doc = $doc])*
        #[pyo3::pyfunction]
        #[pyo3(signature = ($($s)*))]
        // Python's signature dictates the parameters (MLX has functions with nine, and `UPLO`).
        #[allow(unused_variables, non_snake_case, clippy::too_many_arguments)]
        fn $name(py: pyo3::Python<'_>, $($p)*) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
            $crate::bind::Returned::into_python($body, py)
        }
    };
    (@args (method $name:ident [$this:ident] [$($doc:literal)*] $body:expr) [$($p:tt)*] [$($s:tt)*] []) => {
        #[pyo3::pymethods]
        impl $crate::array::PyArray {
            $(#[doc = $doc])*
            #[pyo3(signature = ($($s)*))]
            #[allow(unused_variables)]
            fn $name(&self, py: pyo3::Python<'_>, $($p)*) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                let $this = self.array();
                $crate::bind::Returned::into_python($body, py)
            }
        }
    };

    // Stub text of each parameter.
    (@signature $name:ident $is_method:literal $($args:tt)*) => {{
        #[allow(unused_mut)]
        let mut params: Vec<String> = Vec::new();
        $crate::bind!(@hint params $($args)* ,);
        $crate::signature::Signature { name: stringify!($name).trim_start_matches("r#"), is_method: $is_method, params }
    }};
    (@hint $v:ident / , $($rest:tt)*) => {
        $v.push("/".into());
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident * , $($rest:tt)*) => {
        $v.push("*".into());
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident stream , $($rest:tt)*) => {
        $v.push("stream: StreamOrDevice = None".into());
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident $n:ident : $t:ty = None , $($rest:tt)*) => {
        $v.push(format!("{}: {} = None", stringify!($n), <$t as $crate::signature::Hint>::hint()));
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident $n:ident : $t:ty = Some($d:literal) , $($rest:tt)*) => {
        $v.push(format!("{}: {} = {}", stringify!($n), <$t as $crate::signature::Hint>::hint(),
            $crate::signature::python_literal(stringify!($d))));
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident $n:ident : $t:ty = $d:literal , $($rest:tt)*) => {
        $v.push(format!("{}: {} = {}", stringify!($n), <$t as $crate::signature::Hint>::hint(),
            $crate::signature::python_literal(stringify!($d))));
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident $n:ident : $t:ty , $($rest:tt)*) => {
        $v.push(format!("{}: {}", stringify!($n), <$t as $crate::signature::Hint>::hint()));
        $crate::bind!(@hint $v $($rest)*);
    };
    (@hint $v:ident , ) => {};
    (@hint $v:ident) => {};
}
