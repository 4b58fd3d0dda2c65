//! The simulated JVM's model: classes (signatures, methods with line and
//! variable tables, fields), threads with frames and locals, objects with
//! fields, strings, event requests, and the suspend counts the debugger
//! moves. `scene()` builds the one small program every middle test runs.

use std::collections::BTreeMap;

use jvmscope::jdwp::event_request::Modifier;
use jvmscope::jdwp::{
    EventKind, Location, MethodId, ReferenceTypeId, SuspendPolicy, Tag, TypeTag, Value,
};

/// A loaded class.
#[derive(Debug, Clone)]
pub struct Class {
    pub id: u64,
    pub signature: String,
    pub source: String,
    /// The superclass's id; 0 for `java.lang.Object`.
    pub superclass: u64,
    pub methods: Vec<Method>,
    pub fields: Vec<Field>,
}

/// A method, with its line and variable tables.
#[derive(Debug, Clone)]
pub struct Method {
    pub id: u64,
    pub name: String,
    pub signature: String,
    pub mods: i32,
    /// `(code index, line)`, in code order.
    pub lines: Vec<(i64, i32)>,
    /// The last code index.
    pub end: i64,
    /// Slots taken by the arguments (with `this`).
    pub arg_cnt: i32,
    pub vars: Vec<Var>,
}

/// One entry of a method's variable table.
#[derive(Debug, Clone)]
pub struct Var {
    pub name: String,
    pub signature: String,
    pub slot: i32,
    pub start: i64,
    pub length: i32,
}

/// A field; `value` is a static field's value.
#[derive(Debug, Clone)]
pub struct Field {
    pub id: u64,
    pub name: String,
    pub signature: String,
    pub mods: i32,
    pub value: Option<Value>,
}

/// One frame of a thread: where it is and its locals by slot.
#[derive(Debug, Clone)]
pub struct Frame {
    pub class: u64,
    pub method: u64,
    pub index: u64,
    pub locals: BTreeMap<i32, Value>,
    /// `this`; 0 in a static method.
    pub this: u64,
}

/// A thread, its suspend count and its stack (top first).
#[derive(Debug, Clone)]
pub struct Thread {
    pub id: u64,
    pub name: String,
    pub count: i32,
    pub frames: Vec<Frame>,
}

/// An object: its class and its instance fields' values.
#[derive(Debug, Clone)]
pub struct Object {
    pub class: u64,
    pub fields: BTreeMap<u64, Value>,
}

/// An event request the debugger set.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: i32,
    pub kind: EventKind,
    pub policy: SuspendPolicy,
    pub modifiers: Vec<Modifier>,
    /// Occurrences seen so far (for a `Count` modifier).
    pub seen: i32,
    /// A count request that has fired is spent.
    pub spent: bool,
}

/// The whole simulated JVM.
#[derive(Debug, Clone, Default)]
pub struct Jvm {
    pub classes: Vec<Class>,
    pub threads: Vec<Thread>,
    pub objects: BTreeMap<u64, Object>,
    pub strings: BTreeMap<u64, String>,
    pub requests: Vec<Request>,
    pub next_request: i32,
    pub next_object: u64,
    /// Every command received, `(set, command)`, in order.
    pub received: Vec<(u8, u8)>,
    /// Commands answered NOT_IMPLEMENTED: what the sim does not model.
    pub unmodelled: Vec<(u8, u8)>,
    /// VirtualMachine.Resume commands received.
    pub vm_resumes: usize,
    /// ThreadReference.Resume commands received, by thread.
    pub thread_resumes: Vec<u64>,
}

/// Ids of the scene.
pub mod ids {
    pub const SHOP: u64 = 0x100;
    pub const ORDER: u64 = 0x101;
    pub const MAIN: u64 = 0x102;
    pub const STRING: u64 = 0x110;
    pub const OBJECT: u64 = 0x111;
    pub const THREAD: u64 = 0x112;
    pub const CHECKOUT: u64 = 0x200;
    pub const MAIN_METHOD: u64 = 0x210;
    pub const COUNT: u64 = 0x300;
    pub const OWNER: u64 = 0x301;
    pub const TAX: u64 = 0x302;
    pub const ORDER_ID: u64 = 0x310;
    pub const CUSTOMER: u64 = 0x311;
    pub const THE_SHOP: u64 = 0x500;
    pub const THE_ORDER: u64 = 0x501;
    pub const ADA: u64 = 0x600;
    pub const BOB: u64 = 0x601;
    pub const GROUP: u64 = 0x700;
    /// The two application threads.
    pub const MAIN_THREAD: u64 = 1;
    pub const WORKER: u64 = 2;
}

/// The first line of `Shop.checkout` and the code index step per line.
pub const CHECKOUT_FIRST_LINE: i32 = 10;
const STEP: i64 = 8;

fn obj(tag: Tag, id: u64) -> Value {
    Value::Object {
        tag,
        id: jvmscope::jdwp::ObjectId(id),
    }
}

fn var(name: &str, signature: &str, slot: i32, start: i64, end: i64) -> Var {
    Var {
        name: name.into(),
        signature: signature.into(),
        slot,
        start,
        length: i32::try_from(end - start).unwrap_or(0),
    }
}

fn field(id: u64, name: &str, signature: &str, mods: i32, value: Option<Value>) -> Field {
    Field {
        id,
        name: name.into(),
        signature: signature.into(),
        mods,
        value,
    }
}

fn class(id: u64, signature: &str, superclass: u64) -> Class {
    Class {
        id,
        signature: signature.into(),
        source: format!(
            "{}.java",
            signature
                .trim_end_matches(';')
                .rsplit('/')
                .next()
                .unwrap_or("X")
        ),
        superclass,
        methods: vec![],
        fields: vec![],
    }
}

/// `demo.Shop.checkout(int qty, String name)` (lines 10..=14) called from
/// `demo.Main.main` (line 5), on the thread `main`; the thread `worker` is
/// in the same method with other locals. Nothing is suspended.
pub fn scene() -> Jvm {
    let (checkout, main) = methods();
    build(checkout, main)
}

/// `Shop.checkout` and `Main.main`, with their tables.
fn methods() -> (Method, Method) {
    use ids::*;
    let end = 5 * STEP;
    let checkout = Method {
        id: CHECKOUT,
        name: "checkout".into(),
        signature: "(ILjava/lang/String;)J".into(),
        mods: 0x1,
        lines: (0..5)
            .map(|i| (i * STEP, CHECKOUT_FIRST_LINE + i as i32))
            .collect(),
        end,
        arg_cnt: 3,
        vars: vec![
            var("this", "Ldemo/Shop;", 0, 0, end),
            var("qty", "I", 1, 0, end),
            var("name", "Ljava/lang/String;", 2, 0, end),
            var("total", "J", 3, STEP, end),
            var("order", "Ldemo/Order;", 5, 2 * STEP, end),
        ],
    };
    let main = Method {
        id: MAIN_METHOD,
        name: "main".into(),
        signature: "([Ljava/lang/String;)V".into(),
        mods: 0x9,
        lines: vec![(0, 4), (4, 5), (8, 6)],
        end: 12,
        arg_cnt: 1,
        vars: vec![
            var("args", "[Ljava/lang/String;", 0, 0, 12),
            var("shop", "Ldemo/Shop;", 1, 4, 12),
        ],
    };
    (checkout, main)
}

/// The scene's classes and objects: see [`scene`].
fn build(checkout: Method, main: Method) -> Jvm {
    use ids::*;
    let mut shop = class(SHOP, "Ldemo/Shop;", OBJECT);
    shop.methods = vec![checkout];
    shop.fields = vec![
        field(COUNT, "count", "I", 0x2, None),
        field(OWNER, "owner", "Ljava/lang/String;", 0x2, None),
        field(TAX, "TAX", "I", 0x1a, Some(Value::Int(20))),
    ];
    let mut order = class(ORDER, "Ldemo/Order;", OBJECT);
    order.fields = vec![
        field(ORDER_ID, "id", "I", 0x1, None),
        field(CUSTOMER, "customer", "Ljava/lang/String;", 0x1, None),
    ];
    let mut main_class = class(MAIN, "Ldemo/Main;", OBJECT);
    main_class.methods = vec![main];
    let at_line = |line: i32| ((line - CHECKOUT_FIRST_LINE) as u64) * STEP as u64;
    let checkout_frame = |qty: i32, name: u64, total: i64| Frame {
        class: SHOP,
        method: CHECKOUT,
        index: at_line(12),
        locals: BTreeMap::from([
            (0, obj(Tag::Object, THE_SHOP)),
            (1, Value::Int(qty)),
            (2, obj(Tag::String, name)),
            (3, Value::Long(total)),
            (5, obj(Tag::Object, THE_ORDER)),
        ]),
        this: THE_SHOP,
    };
    let main_frame = Frame {
        class: MAIN,
        method: MAIN_METHOD,
        index: 4,
        locals: BTreeMap::from([(0, obj(Tag::Array, 0)), (1, obj(Tag::Object, THE_SHOP))]),
        this: 0,
    };
    Jvm {
        classes: vec![
            shop,
            order,
            main_class,
            class(STRING, "Ljava/lang/String;", OBJECT),
            class(OBJECT, "Ljava/lang/Object;", 0),
            class(THREAD, "Ljava/lang/Thread;", OBJECT),
        ],
        threads: vec![
            Thread {
                id: MAIN_THREAD,
                name: "main".into(),
                count: 0,
                frames: vec![checkout_frame(3, ADA, 42), main_frame.clone()],
            },
            Thread {
                id: WORKER,
                name: "worker".into(),
                count: 0,
                frames: vec![checkout_frame(8, BOB, 7), main_frame],
            },
        ],
        objects: BTreeMap::from([
            (
                THE_SHOP,
                Object {
                    class: SHOP,
                    fields: BTreeMap::from([
                        (COUNT, Value::Int(7)),
                        (OWNER, obj(Tag::String, BOB)),
                    ]),
                },
            ),
            (
                THE_ORDER,
                Object {
                    class: ORDER,
                    fields: BTreeMap::from([
                        (ORDER_ID, Value::Int(99)),
                        (CUSTOMER, obj(Tag::String, ADA)),
                    ]),
                },
            ),
        ]),
        strings: BTreeMap::from([(ADA, "ada".into()), (BOB, "bob".into())]),
        requests: vec![],
        next_request: 1,
        next_object: 0x1000,
        ..Jvm::default()
    }
}

impl Jvm {
    pub fn class(&self, id: u64) -> Option<&Class> {
        self.classes.iter().find(|c| c.id == id)
    }

    pub fn class_by_signature(&self, signature: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.signature == signature)
    }

    pub fn method(&self, class: u64, method: u64) -> Option<&Method> {
        self.class(class)?.methods.iter().find(|m| m.id == method)
    }

    pub fn thread(&self, id: u64) -> Option<&Thread> {
        self.threads.iter().find(|t| t.id == id)
    }

    pub fn thread_mut(&mut self, id: u64) -> Option<&mut Thread> {
        self.threads.iter_mut().find(|t| t.id == id)
    }

    /// Every thread's suspend count, `(thread, count)`.
    pub fn counts(&self) -> Vec<(u64, i32)> {
        self.threads.iter().map(|t| (t.id, t.count)).collect()
    }

    /// The class of an object id: a string, a thread, a thread group or an
    /// object of the model.
    pub fn class_of(&self, object: u64) -> Option<(TypeTag, u64)> {
        if self.strings.contains_key(&object) {
            return Some((TypeTag::Class, ids::STRING));
        }
        if self.thread(object).is_some() {
            return Some((TypeTag::Class, ids::THREAD));
        }
        self.objects.get(&object).map(|o| (TypeTag::Class, o.class))
    }

    /// The tag a value of object `id` carries.
    pub fn tag_of(&self, id: u64) -> Tag {
        if id == 0 {
            Tag::Object
        } else if self.strings.contains_key(&id) {
            Tag::String
        } else if self.thread(id).is_some() {
            Tag::Thread
        } else {
            Tag::Object
        }
    }

    /// The location of `line` in `class.method`.
    pub fn location(&self, class: &str, method: &str, line: i32) -> Location {
        let c = self
            .class_by_signature(&format!("L{};", class.replace('.', "/")))
            .unwrap_or_else(|| panic!("sim: no class {class}"));
        let m = c
            .methods
            .iter()
            .find(|m| m.name == method)
            .unwrap_or_else(|| panic!("sim: no method {class}.{method}"));
        let index = m
            .lines
            .iter()
            .find(|(_, l)| *l == line)
            .unwrap_or_else(|| panic!("sim: no line {line} in {class}.{method}"))
            .0;
        Location {
            type_tag: TypeTag::Class,
            class: ReferenceTypeId(c.id),
            method: MethodId(m.id),
            index: index as u64,
        }
    }

    /// The line of a location.
    pub fn line_of(&self, at: &Location) -> Option<i32> {
        let m = self.method(at.class.0, at.method.0)?;
        m.lines
            .iter()
            .rev()
            .find(|(index, _)| *index as u64 <= at.index)
            .map(|(_, line)| *line)
    }

    /// The live (not spent) requests of `kind`.
    pub fn requests_of(&self, kind: EventKind) -> Vec<&Request> {
        self.requests
            .iter()
            .filter(|r| r.kind == kind && !r.spent)
            .collect()
    }

    /// A new string object.
    pub fn new_string(&mut self, text: &str) -> u64 {
        let id = self.next_object;
        self.next_object += 1;
        self.strings.insert(id, text.to_string());
        id
    }
}
