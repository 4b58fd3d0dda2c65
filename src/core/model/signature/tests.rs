//! The one reader of type words: descriptors and names both ways, generic
//! signatures read as source and as a call's types, hostile text refused.

use proptest::prelude::*;

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

#[test]
fn descriptors_and_names_both_ways() {
    for (name, sig) in [
        ("java.util.HashMap", "Ljava/util/HashMap;"),
        ("int[]", "[I"),
        ("byte[]", "[B"),
        ("java.lang.String[][]", "[[Ljava/lang/String;"),
        ("Outer$Inner", "LOuter$Inner;"),
        ("java.util.HashMap$Node", "Ljava/util/HashMap$Node;"),
        ("boolean", "Z"),
        ("void", "V"),
        // A class of the default package whose name starts with an L.
        ("Leak", "LLeak;"),
        ("LLeak[]", "[LLLeak;"),
    ] {
        assert_eq!(jni_signature(name), sig);
        assert_eq!(java_name(sig), name);
    }
    // HotSpot's histogram writes array classes with dots.
    assert_eq!(java_name("[Ljava.lang.Object;"), "java.lang.Object[]");
    // Text that is no descriptor stays as it is.
    assert_eq!(java_name("Q"), "Q");
    assert_eq!(java_name("Zebra"), "Zebra");
    assert_eq!(java_name(""), "");
}

#[test]
fn method_descriptors_split_into_their_parts() {
    assert_eq!(
        split_method_descriptor("(ILjava/lang/String;[J[[Ljava/util/Map;Z)V"),
        Some((
            vec![
                "I".to_string(),
                "Ljava/lang/String;".into(),
                "[J".into(),
                "[[Ljava/util/Map;".into(),
                "Z".into()
            ],
            "V".to_string()
        ))
    );
    assert_eq!(
        split_method_descriptor("()V"),
        Some((Vec::new(), "V".into()))
    );
    for bad in ["", "I", "(", "(Q)V", "(Ljava/lang/String)V", "([)V"] {
        assert_eq!(split_method_descriptor(bad), None, "{bad:?}");
    }
}

#[test]
fn generic_types_read_as_source_and_erase_for_a_call() {
    let t = read_type("La/Outer<TT;>.Inner<+Ljava/lang/Number;-TU;*>;").expect("parses");
    assert_eq!(
        t.source(),
        "a.Outer<T>.Inner<? extends java.lang.Number, ? super U, ?>"
    );
    assert_eq!(
        t.erase().java(),
        "a.Outer$Inner<java.lang.Number, U, java.lang.Object>"
    );
    let m = read_method("<T::Ljava/lang/Comparable<-TT;>;U:Ljava/lang/Object;>(TT;)V^TE;")
        .expect("parses");
    assert_eq!(
        type_params_source(&m.type_params),
        "<T extends java.lang.Comparable<? super T>, U>"
    );
    assert_eq!(m.throws, [Generic::Var("E".into())]);
    assert_eq!(read_type("Ljava/util/List<"), None);
    assert_eq!(read_type("I;"), None, "a whole type, nothing after");
}

/// A generic type tree and the signature that writes it.
fn generic() -> impl Strategy<Value = (Generic, String)> {
    let ident = "[a-zA-Z_][a-zA-Z0-9_$]{0,6}";
    let leaf = prop_oneof![
        proptest::sample::select(vec!['Z', 'B', 'C', 'S', 'I', 'J', 'F', 'D'])
            .prop_map(|c| (Generic::Prim(c), c.to_string())),
        ident.prop_map(|v| (Generic::Var(v.clone()), format!("T{v};"))),
        ("[a-z]{1,4}", ident).prop_map(|(pkg, n)| {
            let g = Generic::Class(vec![Segment {
                name: format!("{pkg}.{n}"),
                args: Vec::new(),
            }]);
            (g, format!("L{pkg}/{n};"))
        }),
    ];
    leaf.prop_recursive(4, 24, 3, move |inner| {
        let arg = prop_oneof![
            Just((TypeArg::Any, "*".to_string())),
            inner
                .clone()
                .prop_map(|(g, s)| (TypeArg::Extends(g), format!("+{s}"))),
            inner
                .clone()
                .prop_map(|(g, s)| (TypeArg::Super(g), format!("-{s}"))),
            inner.clone().prop_map(|(g, s)| (TypeArg::Exactly(g), s)),
        ];
        prop_oneof![
            inner
                .clone()
                .prop_map(|(g, s)| (Generic::Array(Box::new(g)), format!("[{s}"))),
            (
                ident,
                proptest::collection::vec(arg.clone(), 1..3),
                ident,
                proptest::collection::vec(arg, 0..2)
            )
                .prop_map(|(outer, oargs, inner_name, iargs)| {
                    let written = |args: &[(TypeArg, String)]| {
                        if args.is_empty() {
                            String::new()
                        } else {
                            let each: Vec<&str> = args.iter().map(|(_, s)| s.as_str()).collect();
                            format!("<{}>", each.concat())
                        }
                    };
                    let sig = format!(
                        "Lp/{outer}{}.{inner_name}{};",
                        written(&oargs),
                        written(&iargs)
                    );
                    let g = Generic::Class(vec![
                        Segment {
                            name: format!("p.{outer}"),
                            args: oargs.into_iter().map(|(a, _)| a).collect(),
                        },
                        Segment {
                            name: inner_name,
                            args: iargs.into_iter().map(|(a, _)| a).collect(),
                        },
                    ]);
                    (g, sig)
                }),
        ]
    })
}

/// An erased field descriptor and its Java name.
fn descriptor() -> impl Strategy<Value = (String, String)> {
    let base = prop_oneof![
        proptest::sample::select(PRIMS[..8].to_vec())
            .prop_map(|(c, n)| (c.to_string(), n.to_string())),
        proptest::collection::vec("[a-zA-Z_$][a-zA-Z0-9_$]{0,8}", 1..4)
            .prop_map(|parts| (format!("L{};", parts.join("/")), parts.join("."))),
    ];
    (base, 0usize..4).prop_map(|((d, n), dims)| {
        (
            format!("{}{d}", "[".repeat(dims)),
            format!("{n}{}", "[]".repeat(dims)),
        )
    })
}

proptest! {
    #[test]
    fn a_generic_signature_reads_back_as_its_tree((tree, sig) in generic()) {
        prop_assert_eq!(read_type(&sig), Some(tree.clone()));
        let m = format!("({sig}{sig})V");
        let read = read_method(&m).expect("a method of two such parameters parses");
        prop_assert_eq!(&read.params, &vec![tree.clone(), tree]);
    }

    #[test]
    fn descriptors_decode_one_way_and_encode_the_other((d, name) in descriptor()) {
        prop_assert_eq!(java_name(&d), name.clone());
        prop_assert_eq!(jni_signature(&name), d.clone());
        let read = read_type(&d).expect("an erased descriptor is a signature");
        prop_assert_eq!(read.source(), name);
        prop_assert_eq!(read.erase().jni(), d);
    }

    #[test]
    fn method_descriptors_split_into_their_parameters(
        params in proptest::collection::vec(descriptor(), 0..6)
    ) {
        let written: Vec<String> = params.iter().map(|(d, _)| d.clone()).collect();
        let m = format!("({})V", written.concat());
        prop_assert_eq!(split_method_descriptor(&m), Some((written.clone(), "V".to_string())));
        let (types, ret) = method_types(&m).expect("parses");
        prop_assert_eq!(types.iter().map(JType::jni).collect::<Vec<_>>(), written);
        prop_assert_eq!(ret, JType::Prim('V'));
    }

    #[test]
    fn any_text_is_read_without_panic(text in "[\\[LT<>;:+*^()./IVa-z-]{0,200}") {
        let _ = java_name(&text);
        let _ = jni_signature(&text);
        let _ = split_method_descriptor(&text);
        let _ = read_type(&text);
        let _ = read_method(&text);
        let _ = read_class_type_params(&text);
        let _ = method_types(&text);
    }
}

#[test]
fn only_jdk_types_count_as_defined_once_for_good() {
    for sig in [
        "Ljava/lang/Class;",
        "[B",
        "[[I",
        "[Ljava/lang/Object;",
        "Ljava/io/InputStream;",
    ] {
        assert!(is_boot_only(sig), "{sig}");
    }
    for sig in [
        "LReplica;",
        "Ljavax/sql/DataSource;",
        "Ljavafoo/Bar;",
        "[Lcom/acme/Order;",
        "Ljava/",
        "[",
        "",
        "BB",
    ] {
        assert!(!is_boot_only(sig), "{sig}");
    }
}
