//! The JVM's type words, read and written in this one place: JNI
//! descriptors (`Ljava/lang/String;`, `[I`, `(ILjava/lang/String;)V`) and
//! Java names (`java.lang.String`, `int[]`) both ways, and the generic
//! signatures class files carry
//! (`<T:Ljava/lang/Object;>(Ljava/util/List<+TT;>;)TT;^Ljava/io/IOException;`)
//! parsed by the JVMS 4.7.9.1 grammar into a [`Generic`] tree, which
//! renders as Java source or erases to a [`JType`] (what a call needs).
//! Pure; nesting is bounded, so a hostile signature cannot overflow the
//! stack.

/// The eight primitives and `void`: JNI letter and Java name.
const PRIMS: [(char, &str); 9] = [
    ('Z', "boolean"),
    ('B', "byte"),
    ('C', "char"),
    ('S', "short"),
    ('I', "int"),
    ('J', "long"),
    ('F', "float"),
    ('D', "double"),
    ('V', "void"),
];

fn prim_name(c: char) -> Option<&'static str> {
    PRIMS.iter().find(|(l, _)| *l == c).map(|(_, n)| *n)
}

/// A JNI type descriptor as Java writes the type: `Ljava/util/Map$Entry;`
/// → `java.util.Map$Entry`, `[I` → `int[]`, `V` → `void`. Text that is no
/// descriptor comes back as it is (its array brackets read).
pub fn java_name(descriptor: &str) -> String {
    let dims = descriptor.bytes().take_while(|b| *b == b'[').count();
    let base = &descriptor[dims..];
    let mut chars = base.chars();
    let name = match (chars.next(), chars.next()) {
        (Some(c), None) if prim_name(c).is_some() => prim_name(c).unwrap_or_default().to_string(),
        // One `L` and one `;`: a class of the default package may itself
        // start with an L (`LLeak;` is `Leak`).
        (Some('L'), Some(_)) => {
            let inner = &base[1..];
            inner.strip_suffix(';').unwrap_or(inner).replace('/', ".")
        }
        _ => base.to_string(),
    };
    format!("{name}{}", "[]".repeat(dims))
}

/// The internal name of the class a field descriptor names:
/// `Ljava/util/Map$Entry;` → `java/util/Map$Entry`; `None` for a
/// primitive, an array or text that is no descriptor.
pub fn class_internal_name(descriptor: &str) -> Option<&str> {
    descriptor
        .strip_prefix('L')
        .and_then(|d| d.strip_suffix(';'))
        .filter(|d| !d.is_empty())
}

/// A Java name as a JNI descriptor: `java.util.Map$Entry` →
/// `Ljava/util/Map$Entry;`, `int[]` → `[I`.
pub fn jni_signature(name: &str) -> String {
    let mut base = name.trim();
    let mut dims = 0;
    while let Some(stripped) = base.strip_suffix("[]") {
        base = stripped;
        dims += 1;
    }
    let sig = match PRIMS.iter().find(|(_, n)| *n == base) {
        Some((letter, _)) => letter.to_string(),
        None => format!("L{};", base.replace('.', "/")),
    };
    format!("{}{sig}", "[".repeat(dims))
}

/// Whether only the JDK's own loaders can define the type of JNI
/// descriptor `sig`, so a JVM holds one copy of it for good: a class of a
/// `java.*` package (the JVM refuses that name to any other loader), a
/// primitive, or an array of either.
pub fn is_boot_only(sig: &str) -> bool {
    let element = sig.trim_start_matches('[');
    match element.len() {
        1 => PRIMS.iter().any(|(letter, _)| element.starts_with(*letter)),
        _ => element.starts_with("Ljava/") && element.ends_with(';'),
    }
}

/// A method descriptor's parameter descriptors and return descriptor:
/// `(I[Ljava/lang/String;)V` → `(["I", "[Ljava/lang/String;"], "V")`.
pub fn split_method_descriptor(descriptor: &str) -> Option<(Vec<String>, String)> {
    let inner = descriptor.strip_prefix('(')?;
    let (params, ret) = inner.split_once(')')?;
    let mut out = Vec::new();
    let b = params.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while b.get(i) == Some(&b'[') {
            i += 1;
        }
        match b.get(i)? {
            b'L' => i += params[i..].find(';')? + 1,
            b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' => i += 1,
            // Not a field type: a garbled descriptor.
            _ => return None,
        }
        out.push(params[start..i].to_string());
    }
    Some((out, ret.to_string()))
}

/// A Java type read from a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JType {
    /// A primitive or `void`, by its JNI letter (`I`, `Z`, `V`, …).
    Prim(char),
    /// A class or interface with its type arguments (empty when raw).
    Class { name: String, args: Vec<JType> },
    /// An array of the element type.
    Array(Box<JType>),
    /// A type variable (`T`), erased to its bound when used.
    Var(String),
}

impl JType {
    /// `java.lang.Object`, the type of an unbounded wildcard or variable.
    pub fn object() -> JType {
        JType::Class {
            name: "java.lang.Object".into(),
            args: Vec::new(),
        }
    }

    /// The Java source form: `java.util.Map<java.lang.String, java.lang.Object>`, `int[]`.
    pub fn java(&self) -> String {
        match self {
            JType::Prim(c) => prim_name(*c).unwrap_or("void").to_string(),
            JType::Class { name, args } if args.is_empty() => name.clone(),
            JType::Class { name, args } => format!(
                "{name}<{}>",
                args.iter().map(JType::java).collect::<Vec<_>>().join(", ")
            ),
            JType::Array(e) => format!("{}[]", e.java()),
            JType::Var(v) => v.clone(),
        }
    }

    /// The erased JNI signature (`Ljava/util/Map;`, `[I`); a type variable
    /// erases to `Ljava/lang/Object;`.
    pub fn jni(&self) -> String {
        match self {
            JType::Prim(c) => c.to_string(),
            JType::Class { name, .. } => format!("L{};", name.replace('.', "/")),
            JType::Array(e) => format!("[{}", e.jni()),
            JType::Var(_) => "Ljava/lang/Object;".into(),
        }
    }

    /// The `i`th type argument, `java.lang.Object` when there is none.
    pub fn arg(&self, i: usize) -> JType {
        match self {
            JType::Class { args, .. } => args.get(i).cloned().unwrap_or_else(JType::object),
            _ => JType::object(),
        }
    }

    /// The erased class name (`java.util.Map`), `None` for primitives and arrays.
    pub fn class_name(&self) -> Option<&str> {
        match self {
            JType::Class { name, .. } => Some(name),
            JType::Var(_) => Some("java.lang.Object"),
            _ => None,
        }
    }
}

/// A type as a signature writes it, nothing erased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Generic {
    /// A primitive or `void`, by its JNI letter.
    Prim(char),
    /// A class type: `Outer<T>.Inner<String>` is two segments, the first
    /// named with its package (`java.util.Map`), each with its arguments.
    Class(Vec<Segment>),
    Array(Box<Generic>),
    /// A type variable (`T`).
    Var(String),
}

/// One segment of a class type and its type arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub name: String,
    pub args: Vec<TypeArg>,
}

/// A type argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeArg {
    /// `*`: `?`.
    Any,
    /// `+T`: `? extends T`.
    Extends(Generic),
    /// `-T`: `? super T`.
    Super(Generic),
    Exactly(Generic),
}

/// A type parameter (`T extends java.lang.Comparable<? super T>`): its
/// class bound (if written) and interface bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeParam {
    pub name: String,
    pub bounds: Vec<Generic>,
}

/// A method signature, erased or generic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodSignature {
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Generic>,
    pub returns: Generic,
    pub throws: Vec<Generic>,
}

impl Generic {
    /// The Java source form: `java.util.Map<java.lang.String, ? extends T>`,
    /// `Outer<T>.Inner`, `int[]`.
    pub fn source(&self) -> String {
        match self {
            Generic::Prim(c) => prim_name(*c).unwrap_or("void").to_string(),
            Generic::Class(segments) => segments
                .iter()
                .map(|s| {
                    if s.args.is_empty() {
                        return s.name.clone();
                    }
                    let args: Vec<String> = s.args.iter().map(TypeArg::source).collect();
                    format!("{}<{}>", s.name, args.join(", "))
                })
                .collect::<Vec<_>>()
                .join("."),
            Generic::Array(e) => format!("{}[]", e.source()),
            Generic::Var(v) => v.clone(),
        }
    }

    /// The type a call works with: inner segments joined by `$` with the
    /// last written arguments, wildcards read as their bound (`?` as
    /// `java.lang.Object`).
    pub fn erase(&self) -> JType {
        match self {
            Generic::Prim(c) => JType::Prim(*c),
            Generic::Class(segments) => JType::Class {
                name: segments
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join("$"),
                args: segments
                    .iter()
                    .rev()
                    .find(|s| !s.args.is_empty())
                    .map(|s| s.args.iter().map(TypeArg::erase).collect())
                    .unwrap_or_default(),
            },
            Generic::Array(e) => JType::Array(Box::new(e.erase())),
            Generic::Var(v) => JType::Var(v.clone()),
        }
    }
}

impl TypeArg {
    fn source(&self) -> String {
        match self {
            TypeArg::Any => "?".into(),
            TypeArg::Extends(t) => format!("? extends {}", t.source()),
            TypeArg::Super(t) => format!("? super {}", t.source()),
            TypeArg::Exactly(t) => t.source(),
        }
    }

    fn erase(&self) -> JType {
        match self {
            TypeArg::Any => JType::object(),
            TypeArg::Extends(t) | TypeArg::Super(t) | TypeArg::Exactly(t) => t.erase(),
        }
    }
}

/// Type parameters as source: `<K, V extends java.lang.Number>` (a bound
/// of `java.lang.Object` is left unsaid), empty when there are none.
pub fn type_params_source(params: &[TypeParam]) -> String {
    if params.is_empty() {
        return String::new();
    }
    let each: Vec<String> = params
        .iter()
        .map(|p| {
            let bounds: Vec<String> = p
                .bounds
                .iter()
                .map(Generic::source)
                .filter(|b| b != "java.lang.Object")
                .collect();
            if bounds.is_empty() {
                p.name.clone()
            } else {
                format!("{} extends {}", p.name, bounds.join(" & "))
            }
        })
        .collect();
    format!("<{}>", each.join(", "))
}

/// One whole field or value type signature (`V` too), erased or generic.
pub fn read_type(sig: &str) -> Option<Generic> {
    Parser::new(sig).whole(Parser::ty)
}

/// One whole method signature, erased or generic.
pub fn read_method(sig: &str) -> Option<MethodSignature> {
    Parser::new(sig).whole(Parser::method)
}

/// A class signature's own type parameters (`<K:…>Ljava/lang/Object;`);
/// empty when it has none, `None` when they do not parse.
pub fn read_class_type_params(sig: &str) -> Option<Vec<TypeParam>> {
    if !sig.starts_with('<') {
        return Some(Vec::new());
    }
    Parser::new(sig).type_params()
}

/// The parameter types and the return type of a method signature, erased
/// or generic, as a call works with them; `None` when the text does not
/// begin with a method signature.
pub fn method_types(sig: &str) -> Option<(Vec<JType>, JType)> {
    let m = Parser::new(sig).method()?;
    Some((
        m.params.iter().map(Generic::erase).collect(),
        m.returns.erase(),
    ))
}

/// A recursive-descent reader of one signature.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// Nesting depth, bounded so a hostile signature cannot overflow the stack.
    depth: usize,
}

const MAX_DEPTH: usize = 64;

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser {
            s: s.as_bytes(),
            i: 0,
            depth: 0,
        }
    }

    /// Runs `f` and requires it to consume everything.
    fn whole<T>(mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let v = f(&mut self)?;
        (self.i == self.s.len()).then_some(v)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A non-empty run of bytes up to one of `stops`.
    fn ident(&mut self, stops: &[u8]) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(|c| !stops.contains(&c)) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .map(str::to_string)
    }

    /// Any type, `V` included (a return type).
    fn ty(&mut self) -> Option<Generic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let c = self.peek()?;
        self.i += 1;
        let out = match c {
            b'L' => self.class_type(),
            b'T' => {
                let name = self.ident(b";")?;
                self.eat(b';')?;
                Some(Generic::Var(name))
            }
            b'[' => self.ty().map(|t| Generic::Array(Box::new(t))),
            c => prim_name(c as char).map(|_| Generic::Prim(c as char)),
        };
        self.depth -= 1;
        out
    }

    /// After `L`: `java/util/Map<TK;TV;>.Entry<…>;`
    fn class_type(&mut self) -> Option<Generic> {
        let mut segments = Vec::new();
        loop {
            let name = self.ident(b"<;.")?.replace('/', ".");
            let args = if self.peek() == Some(b'<') {
                self.type_args()?
            } else {
                Vec::new()
            };
            segments.push(Segment { name, args });
            match self.peek()? {
                b'.' => self.i += 1,
                b';' => {
                    self.i += 1;
                    return Some(Generic::Class(segments));
                }
                _ => return None,
            }
        }
    }

    fn type_args(&mut self) -> Option<Vec<TypeArg>> {
        self.eat(b'<')?;
        let mut args = Vec::new();
        while self.peek()? != b'>' {
            args.push(match self.peek()? {
                b'*' => {
                    self.i += 1;
                    TypeArg::Any
                }
                b'+' => {
                    self.i += 1;
                    TypeArg::Extends(self.ty()?)
                }
                b'-' => {
                    self.i += 1;
                    TypeArg::Super(self.ty()?)
                }
                _ => TypeArg::Exactly(self.ty()?),
            });
        }
        self.i += 1;
        Some(args)
    }

    /// `<T:Ljava/lang/Object;U::Ljava/lang/Comparable<TU;>;>`
    fn type_params(&mut self) -> Option<Vec<TypeParam>> {
        self.eat(b'<')?;
        let mut params = Vec::new();
        while self.peek()? != b'>' {
            let name = self.ident(b":")?;
            let mut bounds = Vec::new();
            while self.peek() == Some(b':') {
                self.i += 1;
                // An empty class bound (`T::Ljava/lang/Runnable;`).
                if self.peek()? == b':' {
                    continue;
                }
                bounds.push(self.ty()?);
            }
            params.push(TypeParam { name, bounds });
        }
        self.i += 1;
        Some(params)
    }

    fn method(&mut self) -> Option<MethodSignature> {
        let type_params = if self.peek()? == b'<' {
            self.type_params()?
        } else {
            Vec::new()
        };
        self.eat(b'(')?;
        let mut params = Vec::new();
        while self.peek()? != b')' {
            params.push(self.ty()?);
        }
        self.i += 1;
        let returns = self.ty()?;
        let mut throws = Vec::new();
        while self.peek() == Some(b'^') {
            self.i += 1;
            throws.push(self.ty()?);
        }
        Some(MethodSignature {
            type_params,
            params,
            returns,
            throws,
        })
    }
}

#[cfg(test)]
mod tests;
