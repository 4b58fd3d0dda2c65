//! Java type signatures as the class file writes them: the erased JNI form
//! (`(Ljava/lang/String;I)V`) and the generic form
//! (`(Ljava/util/Map<Ljava/lang/String;Ljava/lang/Object;>;)V`), read into
//! a small type tree that names parameter types the way Java source does.

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
            JType::Prim(c) => prim_name(*c).to_string(),
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

fn prim_name(c: char) -> &'static str {
    match c {
        'Z' => "boolean",
        'B' => "byte",
        'C' => "char",
        'S' => "short",
        'I' => "int",
        'J' => "long",
        'F' => "float",
        'D' => "double",
        _ => "void",
    }
}

/// The parameter types and the return type of a method signature, erased
/// or generic; `None` when the text is not a method signature.
pub fn method_types(sig: &str) -> Option<(Vec<JType>, JType)> {
    let mut p = Parser {
        s: sig.as_bytes(),
        i: 0,
    };
    if p.peek() == Some(b'<') {
        p.skip_type_parameters()?;
    }
    p.eat(b'(')?;
    let mut params = Vec::new();
    while p.peek()? != b')' {
        params.push(p.ty()?);
    }
    p.eat(b')')?;
    let ret = p.ty()?;
    Some((params, ret))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.i += 1)
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }

    /// `<T:Ljava/lang/Object;U::Ljava/lang/Comparable<TU;>;>`, skipped
    /// with its nesting.
    fn skip_type_parameters(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.bump()? {
                b'<' => depth += 1,
                b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => {}
            }
        }
    }

    fn ident(&mut self, stops: &[u8]) -> Option<String> {
        let start = self.i;
        while !stops.contains(&self.peek()?) {
            self.i += 1;
        }
        std::str::from_utf8(self.s.get(start..self.i)?)
            .ok()
            .map(str::to_string)
    }

    fn ty(&mut self) -> Option<JType> {
        match self.bump()? {
            c @ (b'Z' | b'B' | b'C' | b'S' | b'I' | b'J' | b'F' | b'D' | b'V') => {
                Some(JType::Prim(c as char))
            }
            b'[' => Some(JType::Array(Box::new(self.ty()?))),
            b'T' => {
                let v = self.ident(b";")?;
                self.eat(b';')?;
                Some(JType::Var(v))
            }
            b'L' => self.class(),
            _ => None,
        }
    }

    /// After `L`: `a/b/C<args>.Inner<args>;`.
    fn class(&mut self) -> Option<JType> {
        let mut name = self.ident(b"<;.")?.replace('/', ".");
        let mut args = Vec::new();
        loop {
            match self.bump()? {
                b';' => return Some(JType::Class { name, args }),
                b'<' => {
                    args.clear();
                    while self.peek()? != b'>' {
                        args.push(self.type_argument()?);
                    }
                    self.eat(b'>')?;
                }
                b'.' => {
                    name.push('$');
                    name.push_str(&self.ident(b"<;.")?);
                }
                _ => return None,
            }
        }
    }

    /// `*`, `+T` (upper bound), `-T` (lower bound, read as `T`) or `T`.
    fn type_argument(&mut self) -> Option<JType> {
        match self.peek()? {
            b'*' => {
                self.i += 1;
                Some(JType::object())
            }
            b'+' | b'-' => {
                self.i += 1;
                self.ty()
            }
            _ => self.ty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_parameters_read_as_java_names() {
        let (params, ret) = method_types(
            "(Ljava/lang/String;ILjava/util/Map<Ljava/lang/String;Ljava/lang/Object;>;)Ljava/math/BigDecimal;",
        )
        .expect("parses");
        let names: Vec<String> = params.iter().map(JType::java).collect();
        assert_eq!(
            names,
            [
                "java.lang.String",
                "int",
                "java.util.Map<java.lang.String, java.lang.Object>"
            ]
        );
        assert_eq!(params[2].jni(), "Ljava/util/Map;");
        assert_eq!(params[2].arg(1).java(), "java.lang.Object");
        assert_eq!(ret.java(), "java.math.BigDecimal");
    }

    #[test]
    fn type_parameters_wildcards_arrays_and_inner_classes() {
        let (params, ret) = method_types(
            "<T:Ljava/lang/Object;>(Ljava/util/List<+TT;>;[[JLa/Outer<TT;>.Inner<*>;Ljava/util/Set<-Ljava/lang/Integer;>;)TT;",
        )
        .expect("parses");
        let names: Vec<String> = params.iter().map(JType::java).collect();
        assert_eq!(
            names,
            [
                "java.util.List<T>",
                "long[][]",
                "a.Outer$Inner<java.lang.Object>",
                "java.util.Set<java.lang.Integer>"
            ]
        );
        assert_eq!(ret.jni(), "Ljava/lang/Object;");
        assert_eq!(params[1].jni(), "[[J");
    }

    #[test]
    fn malformed_signatures_are_refused_not_panicked_on() {
        for bad in [
            "",
            "(",
            "(L",
            "(Ljava/lang/String",
            "(Q)V",
            "<T:",
            "(I)",
            "(Lx<>",
        ] {
            assert_eq!(method_types(bad), None, "{bad:?}");
        }
        assert_eq!(method_types("()V"), Some((Vec::new(), JType::Prim('V'))));
    }
}
