//! What the type stubs say about a bound function: the Python type each parameter's Rust
//! type accepts ([`Hint`]) and a function's parameters as Python text ([`Signature`]).
//! They stand apart from [`bind`](crate::bind) so that argument types anywhere (in
//! `convert`, beside the classes) can name their stub type without depending on the
//! binding machinery, which depends on them.

/// The Python type a parameter's Rust type accepts, as written in the stubs.
pub trait Hint {
    fn hint() -> String;
}

impl Hint for bool {
    fn hint() -> String {
        "bool".into()
    }
}

impl Hint for i32 {
    fn hint() -> String {
        "int".into()
    }
}

impl Hint for i64 {
    fn hint() -> String {
        "int".into()
    }
}

impl Hint for usize {
    fn hint() -> String {
        "int".into()
    }
}

impl Hint for u64 {
    fn hint() -> String {
        "int".into()
    }
}

impl Hint for i128 {
    fn hint() -> String {
        "int".into()
    }
}

impl Hint for &str {
    fn hint() -> String {
        "str".into()
    }
}

impl Hint for f64 {
    fn hint() -> String {
        "float".into()
    }
}

impl<T: Hint> Hint for Option<T> {
    fn hint() -> String {
        format!("{} | None", T::hint())
    }
}

/// One bound function or method, for the stub generator: its name and its parameters
/// as Python text (`"a: array"`, `"/"`, `"axis: int | None = None"`).
pub struct Signature {
    pub name: &'static str,
    pub is_method: bool,
    pub params: Vec<String>,
}

impl Signature {
    /// The Python text of the signature, without the return type.
    pub fn python(&self) -> String {
        let mut params = self.params.clone();
        if self.is_method {
            params.insert(0, "self".into());
        }
        format!("{}({})", self.name, params.join(", "))
    }
}

/// A Rust literal as Python writes it (`true` -> `True`).
pub fn python_literal(rust: &str) -> String {
    match rust {
        "true" => "True".into(),
        s if s.starts_with('"') => format!("'{}'", s.trim_matches('"')),
        "false" => "False".into(),
        other => other.into(),
    }
}
