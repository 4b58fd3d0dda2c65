//! Members written as Java source lines: types from JNI descriptors
//! (`(ILjava/lang/String;)V`) and the optional generic signatures class
//! files carry (`<T:Ljava/lang/Object;>(Ljava/util/List<TT;>;)TT;`), both
//! read by `model::signature`, plus the modifier words of a member. A
//! signature that does not parse falls back to its erased form, never to
//! a blank. Pure.

use super::signature::{
    Generic, MethodSignature, java_name, read_class_type_params, read_method, read_type,
    type_params_source,
};

/// A method's signature as source: `<T>`, parameter types, return, throws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodSig {
    /// `<T extends java.lang.Comparable<? super T>>`, or empty.
    pub type_params: String,
    pub params: Vec<String>,
    pub returns: String,
    pub throws: Vec<String>,
}

/// What a modifier set belongs to (the same bit means different words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    Class,
    Field,
    Method,
}

/// JDWP's marker bit for a synthetic member.
pub const SYNTHETIC_JDWP: i32 = 0xf000_0000_u32 as i32;

/// The modifier words, in the order Java source writes them.
pub fn modifiers(bits: i32, kind: MemberKind) -> Vec<&'static str> {
    let mut words = Vec::new();
    let has = |b: i32| bits & b != 0;
    for (bit, word) in [(0x1, "public"), (0x2, "private"), (0x4, "protected")] {
        if has(bit) {
            words.push(word);
        }
    }
    let interface = kind == MemberKind::Class && has(0x200);
    if has(0x400) && !interface {
        words.push("abstract");
    }
    if has(0x8) {
        words.push("static");
    }
    if has(0x10) {
        words.push("final");
    }
    match kind {
        MemberKind::Field => {
            if has(0x40) {
                words.push("volatile");
            }
            if has(0x80) {
                words.push("transient");
            }
        }
        MemberKind::Method => {
            if has(0x20) {
                words.push("synchronized");
            }
            if has(0x100) {
                words.push("native");
            }
        }
        MemberKind::Class => {}
    }
    words
}

/// Whether a member is compiler-made (bridge, accessor, `this$0`).
pub fn is_synthetic(bits: i32) -> bool {
    bits & 0x1000 != 0 || bits & SYNTHETIC_JDWP == SYNTHETIC_JDWP
}

/// A field or value type as source: the generic form when there is one
/// and it parses, else the erased JNI one.
pub fn type_name(jni: &str, generic: &str) -> String {
    match read_type(generic) {
        Some(t) if !generic.is_empty() => t.source(),
        _ => java_name(jni),
    }
}

fn rendered(m: MethodSignature) -> MethodSig {
    MethodSig {
        type_params: type_params_source(&m.type_params),
        params: m.params.iter().map(Generic::source).collect(),
        returns: m.returns.source(),
        throws: m.throws.iter().map(Generic::source).collect(),
    }
}

/// A method's signature as source. The generic form is used when present
/// and parsable; an inner class's constructor may leave the outer instance
/// out of it, so missing leading parameters come from the JNI descriptor.
pub fn method_sig(jni: &str, generic: &str) -> MethodSig {
    let erased = read_method(jni).map(rendered).unwrap_or(MethodSig {
        type_params: String::new(),
        params: Vec::new(),
        returns: jni.to_string(),
        throws: Vec::new(),
    });
    if generic.is_empty() {
        return erased;
    }
    match read_method(generic).map(rendered) {
        Some(mut g) if g.params.len() <= erased.params.len() => {
            let missing = erased.params.len() - g.params.len();
            let mut params = erased.params[..missing].to_vec();
            params.append(&mut g.params);
            g.params = params;
            g
        }
        _ => erased,
    }
}

/// A class's own generic header: `<K, V extends java.lang.Number>`, or
/// empty when it has none.
pub fn class_type_params(generic: &str) -> String {
    read_class_type_params(generic)
        .map(|p| type_params_source(&p))
        .unwrap_or_default()
}

/// `static <T> java.util.List<T> firstOf(java.util.List<T> xs, int n) throws java.io.IOException`.
/// `names` are the parameter names when the class has a variable table.
pub fn method_line(
    name: &str,
    class_simple: &str,
    modifier_bits: i32,
    sig: &MethodSig,
    names: Option<&[String]>,
) -> String {
    let mut out = words(modifier_bits, MemberKind::Method);
    if !sig.type_params.is_empty() {
        out.push_str(&sig.type_params);
        out.push(' ');
    }
    let varargs = modifier_bits & 0x80 != 0;
    if name == "<init>" {
        out.push_str(class_simple);
    } else {
        out.push_str(&sig.returns);
        out.push(' ');
        out.push_str(name);
    }
    let names = names.filter(|n| n.len() == sig.params.len());
    let params: Vec<String> = sig
        .params
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = match (varargs && i + 1 == sig.params.len(), t.strip_suffix("[]")) {
                (true, Some(elem)) => format!("{elem}..."),
                _ => t.clone(),
            };
            match names {
                Some(n) => format!("{t} {}", n[i]),
                None => t,
            }
        })
        .collect();
    out.push('(');
    out.push_str(&params.join(", "));
    out.push(')');
    if !sig.throws.is_empty() {
        out.push_str(" throws ");
        out.push_str(&sig.throws.join(", "));
    }
    out
}

/// `private static final java.util.Map<java.lang.String, java.lang.Integer> COUNTS`.
pub fn field_line(name: &str, modifier_bits: i32, jni: &str, generic: &str) -> String {
    let mut out = words(modifier_bits, MemberKind::Field);
    out.push_str(&type_name(jni, generic));
    out.push(' ');
    out.push_str(name);
    out
}

fn words(bits: i32, kind: MemberKind) -> String {
    modifiers(bits, kind)
        .into_iter()
        .map(|w| format!("{w} "))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erased_and_generic_types_read_as_source() {
        assert_eq!(type_name("I", ""), "int");
        assert_eq!(
            type_name("[[Ljava/lang/String;", ""),
            "java.lang.String[][]"
        );
        assert_eq!(
            type_name(
                "Ljava/util/Map;",
                "Ljava/util/Map<Ljava/lang/String;Ljava/util/List<+Ljava/lang/Number;>;>;"
            ),
            "java.util.Map<java.lang.String, java.util.List<? extends java.lang.Number>>"
        );
        assert_eq!(type_name("Ljava/lang/Object;", "TT;"), "T");
        assert_eq!(
            type_name("LOuter$Inner;", "LOuter<TT;>.Inner<Ljava/lang/String;>;"),
            "Outer<T>.Inner<java.lang.String>"
        );
        assert_eq!(
            type_name("Ljava/util/List;", "Ljava/util/List<*>;"),
            "java.util.List<?>"
        );
        // A broken generic signature falls back to the erased type.
        assert_eq!(
            type_name("Ljava/util/List;", "Ljava/util/List<"),
            "java.util.List"
        );
        assert_eq!(type_name("Q", ""), "Q");
    }

    #[test]
    fn methods_read_as_source_lines() {
        let sig = method_sig(
            "(Ljava/util/List;I)Ljava/lang/Object;",
            "<T::Ljava/lang/Comparable<-TT;>;>(Ljava/util/List<TT;>;I)TT;^Ljava/io/IOException;",
        );
        assert_eq!(
            sig.type_params,
            "<T extends java.lang.Comparable<? super T>>"
        );
        let names = vec!["items".to_string(), "n".to_string()];
        assert_eq!(
            method_line("pick", "Box", 0x9, &sig, Some(&names)),
            "public static <T extends java.lang.Comparable<? super T>> T pick(java.util.List<T> items, int n) throws java.io.IOException"
        );
        // Names that do not fit the parameters are left out.
        assert_eq!(
            method_line("pick", "Box", 0x9, &sig, Some(&names[..1])),
            "public static <T extends java.lang.Comparable<? super T>> T pick(java.util.List<T>, int) throws java.io.IOException"
        );
        let ctor = method_sig("(LOuter;Ljava/lang/String;)V", "(Ljava/lang/String;)V");
        assert_eq!(ctor.params, ["Outer", "java.lang.String"]);
        assert_eq!(
            method_line("<init>", "Outer$Inner", 0, &ctor, None),
            "Outer$Inner(Outer, java.lang.String)"
        );
        let varargs = method_sig("([Ljava/lang/Object;)V", "");
        assert_eq!(
            method_line("log", "L", 0x81 | 0x20, &varargs, None),
            "public synchronized void log(java.lang.Object...)"
        );
        assert_eq!(
            class_type_params("<K:Ljava/lang/Object;V:Ljava/lang/Number;>Ljava/lang/Object;"),
            "<K, V extends java.lang.Number>"
        );
        assert_eq!(class_type_params("Ljava/lang/Object;"), "");
    }

    #[test]
    fn fields_and_modifiers() {
        assert_eq!(
            field_line(
                "COUNTS",
                0x1a,
                "Ljava/util/Map;",
                "Ljava/util/Map<Ljava/lang/String;Ljava/lang/Integer;>;"
            ),
            "private static final java.util.Map<java.lang.String, java.lang.Integer> COUNTS"
        );
        assert_eq!(
            field_line("flag", 0x40 | 0x80, "Z", ""),
            "volatile transient boolean flag"
        );
        assert_eq!(modifiers(0x601, MemberKind::Class), ["public"]);
        assert!(is_synthetic(0x1000));
        assert!(is_synthetic(SYNTHETIC_JDWP));
        assert!(!is_synthetic(0x1));
    }

    #[test]
    fn hostile_signatures_do_not_overflow() {
        let deep = "[".repeat(10_000) + "I";
        let int_arrays: String = std::iter::once("int")
            .chain(std::iter::repeat_n("[]", 10_000))
            .collect();
        assert_eq!(type_name(&deep, ""), int_arrays);
        assert_eq!(type_name("Ljava/lang/Object;", &deep), "java.lang.Object");
        let nested = "Ljava/util/List<".repeat(5_000);
        assert_eq!(type_name("Ljava/util/List;", &nested), "java.util.List");
    }
}
