//! The simulated JVM's answers: each command the actors send for threads,
//! stacks, locals, objects, classes and event requests is decoded with the
//! codec's own request types and answered from the model with the codec's
//! own reply types, as a JVM would (an unknown id is the JDWP error a
//! JVM gives; a command not modelled is NOT_IMPLEMENTED and recorded).

use jvmscope::jdwp::method::{
    IsObsolete, LineEntry, LineTable, LineTableReply, Variable, VariableTable, VariableTableReply,
    VariableTableWithGeneric, VariableTableWithGenericReply, VariableWithGeneric,
};
use jvmscope::jdwp::reference_type::{
    self as rt, FieldInfo, FieldInfoWithGeneric, MethodInfo, MethodInfoWithGeneric,
    SignatureWithGenericReply,
};
use jvmscope::jdwp::thread_reference::{self as tr, StatusReply};
use jvmscope::jdwp::virtual_machine::{
    self as vm, ClassInfo, GenericClassInfo, MatchingClass, VersionReply,
};
use jvmscope::jdwp::{
    ClassStatus, Command, EventKind, FrameId, FrameInfo, IdSizes, Location, MethodId, ObjectId,
    ReferenceTypeId, RequestId, SuspendStatus, TaggedObjectId, TaggedTypeId, ThreadGroupId,
    ThreadId, ThreadStatus, TypeTag, Value, class_type, decode_request, encode_reply,
    event_request as er, object_reference as or, stack_frame as sf, string_reference,
    thread_group_reference as tg,
};

use super::model::{Class, Jvm, Request, ids};

pub const SIZES: IdSizes = IdSizes::HOTSPOT;

/// JDWP error codes the sim answers with.
pub mod code {
    pub const INVALID_THREAD: u16 = 10;
    pub const INVALID_OBJECT: u16 = 20;
    pub const INVALID_CLASS: u16 = 21;
    pub const INVALID_METHODID: u16 = 23;
    pub const INVALID_FRAMEID: u16 = 30;
    pub const THREAD_NOT_SUSPENDED: u16 = 13;
    pub const ABSENT_INFORMATION: u16 = 101;
    pub const NOT_IMPLEMENTED: u16 = 99;
    pub const ILLEGAL_ARGUMENT: u16 = 103;
    pub const INVALID_INDEX: u16 = 503;
    pub const INVALID_LENGTH: u16 = 504;
}

/// Frame ids: the thread's id and the depth, so a frame id names one
/// frame of one thread.
pub fn frame_id(thread: u64, depth: usize) -> u64 {
    thread << 16 | depth as u64
}

fn frame_of(jvm: &Jvm, thread: u64, frame: u64) -> Result<&super::model::Frame, u16> {
    let t = jvm.thread(thread).ok_or(code::INVALID_THREAD)?;
    if t.count == 0 {
        return Err(code::THREAD_NOT_SUSPENDED);
    }
    if frame >> 16 != thread {
        return Err(code::INVALID_FRAMEID);
    }
    t.frames
        .get((frame & 0xffff) as usize)
        .ok_or(code::INVALID_FRAMEID)
}

fn class_of(jvm: &Jvm, id: ReferenceTypeId) -> Result<&Class, u16> {
    jvm.class(id.0).ok_or(code::INVALID_CLASS)
}

fn tagged(c: &Class) -> TaggedTypeId {
    TaggedTypeId {
        tag: TypeTag::Class,
        id: ReferenceTypeId(c.id),
    }
}

fn ready() -> ClassStatus {
    ClassStatus::VERIFIED | ClassStatus::PREPARED | ClassStatus::INITIALIZED
}

/// Rewrites an object value's tag to the one its object carries (a JVM
/// tags a String local `s`, not `L`).
fn exact(jvm: &Jvm, v: Value) -> Value {
    match v {
        Value::Object { id, tag } if !id.is_null() && tag == jvmscope::jdwp::Tag::Object => {
            Value::Object {
                tag: jvm.tag_of(id.0),
                id,
            }
        }
        other => other,
    }
}

/// Answers `$C` when `key` is its command: its request decoded as `$r`,
/// `$body` its reply (a `return Err(code)` is the JDWP error).
macro_rules! on {
    ($key:ident, $data:ident; $C:ty, |$r:ident| $body:expr) => {
        if $key == (<$C as Command>::SET, <$C as Command>::ID) {
            #[allow(unused_variables)]
            let $r: $C = decode_request::<$C>($data, SIZES).map_err(|_| code::ILLEGAL_ARGUMENT)?;
            let reply: <$C as Command>::Reply = $body;
            return Ok(Some(encode_reply(&reply, SIZES)));
        }
    };
}

/// Answers one command: the reply data, or a JDWP error code.
pub fn answer(jvm: &mut Jvm, set: u8, cmd: u8, data: &[u8]) -> Result<Vec<u8>, u16> {
    let key = (set, cmd);
    for part in [
        virtual_machine,
        types,
        methods,
        requests,
        threads_and_objects,
    ] {
        if let Some(done) = part(jvm, key, data)? {
            return Ok(done);
        }
    }
    jvm.unmodelled.push(key);
    Err(code::NOT_IMPLEMENTED)
}

/// ThreadReference, StackFrame, ObjectReference and StringReference.
fn threads_and_objects(jvm: &mut Jvm, key: (u8, u8), data: &[u8]) -> Result<Option<Vec<u8>>, u16> {
    on!(key, data; tr::Name, |r| jvm.thread(r.thread.0).ok_or(code::INVALID_THREAD)?.name.clone());
    on!(key, data; tr::Status, |r| {
        let t = jvm.thread(r.thread.0).ok_or(code::INVALID_THREAD)?;
        StatusReply {
            thread_status: ThreadStatus::Running,
            suspend_status: if t.count > 0 {
                SuspendStatus::SUSPEND_STATUS_SUSPENDED
            } else {
                SuspendStatus::default()
            },
        }
    });
    on!(key, data; tr::SuspendCount, |r| jvm.thread(r.thread.0).ok_or(code::INVALID_THREAD)?.count);
    on!(key, data; tr::Suspend, |r| {
        jvm.thread_mut(r.thread.0).ok_or(code::INVALID_THREAD)?.count += 1;
    });
    on!(key, data; tr::Resume, |r| {
        let t = jvm.thread_mut(r.thread.0).ok_or(code::INVALID_THREAD)?;
        t.count = (t.count - 1).max(0);
        jvm.thread_resumes.push(r.thread.0);
    });
    on!(key, data; tr::ThreadGroup, |r| {
        jvm.thread(r.thread.0).ok_or(code::INVALID_THREAD)?;
        ThreadGroupId(ids::GROUP)
    });
    on!(key, data; tr::IsVirtual, |r| false);
    on!(key, data; tr::OwnedMonitors, |r| Vec::new());
    on!(key, data; tr::FrameCount, |r| {
        let t = jvm.thread(r.thread.0).ok_or(code::INVALID_THREAD)?;
        if t.count == 0 {
            return Err(code::THREAD_NOT_SUSPENDED);
        }
        t.frames.len() as i32
    });
    on!(key, data; tr::Frames, |r| {
        let t = jvm.thread(r.thread.0).ok_or(code::INVALID_THREAD)?;
        if t.count == 0 {
            return Err(code::THREAD_NOT_SUSPENDED);
        }
        let start = usize::try_from(r.start_frame).map_err(|_| code::ILLEGAL_ARGUMENT)?;
        let end = match r.length {
            -1 => t.frames.len(),
            n => start + usize::try_from(n).map_err(|_| code::ILLEGAL_ARGUMENT)?,
        };
        if start >= t.frames.len() {
            return Err(code::INVALID_INDEX);
        }
        if end > t.frames.len() {
            return Err(code::INVALID_LENGTH);
        }
        (start..end)
            .map(|d| {
                let f = &t.frames[d];
                FrameInfo {
                    frame_id: FrameId(frame_id(t.id, d)),
                    location: Location {
                        type_tag: TypeTag::Class,
                        class: ReferenceTypeId(f.class),
                        method: MethodId(f.method),
                        index: f.index,
                    },
                }
            })
            .collect()
    });
    on!(key, data; tg::Name, |r| "main".to_string());
    on!(key, data; sf::GetValues, |r| {
        let f = frame_of(jvm, r.thread.0, r.frame.0)?;
        let mut out = Vec::new();
        for s in &r.slots {
            let v = *f.locals.get(&s.slot).ok_or(code::INVALID_OBJECT)?;
            out.push(exact(jvm, v));
        }
        out
    });
    on!(key, data; sf::ThisObject, |r| {
        let f = frame_of(jvm, r.thread.0, r.frame.0)?;
        TaggedObjectId {
            tag: jvm.tag_of(f.this),
            id: ObjectId(f.this),
        }
    });
    on!(key, data; string_reference::Value, |r| jvm
        .strings
        .get(&r.string_object.0)
        .ok_or(code::INVALID_OBJECT)?
        .clone());
    on!(key, data; or::ReferenceType, |r| {
        let (tag, class) = jvm.class_of(r.object.0).ok_or(code::INVALID_OBJECT)?;
        TaggedTypeId {
            tag,
            id: ReferenceTypeId(class),
        }
    });
    on!(key, data; or::GetValues, |r| {
        let o = jvm.objects.get(&r.object.0).ok_or(code::INVALID_OBJECT)?;
        let mut out = Vec::new();
        for f in &r.fields {
            out.push(exact(jvm, *o.fields.get(&f.0).ok_or(code::ILLEGAL_ARGUMENT)?));
        }
        out
    });
    on!(key, data; or::IsCollected, |r| {
        jvm.class_of(r.object.0).ok_or(code::INVALID_OBJECT)?;
        false
    });
    on!(key, data; or::DisableCollection, |r| ());
    on!(key, data; or::EnableCollection, |r| ());
    Ok(None)
}

/// VirtualMachine commands.
fn virtual_machine(jvm: &mut Jvm, key: (u8, u8), data: &[u8]) -> Result<Option<Vec<u8>>, u16> {
    on!(key, data; vm::Version, |r| VersionReply {
        description: "Simulated JVM".into(),
        jdwp_major: 17,
        jdwp_minor: 0,
        vm_version: "17.0.0".into(),
        vm_name: "SimVM".into(),
    });
    on!(key, data; vm::IdSizesCmd, |r| SIZES);
    on!(key, data; vm::AllThreads, |r| jvm.threads.iter().map(|t| ThreadId(t.id)).collect());
    on!(key, data; vm::TopLevelThreadGroups, |r| vec![ThreadGroupId(ids::GROUP)]);
    on!(key, data; vm::Suspend, |r| jvm.threads.iter_mut().for_each(|t| t.count += 1));
    on!(key, data; vm::Resume, |r| {
        jvm.vm_resumes += 1;
        jvm.threads
            .iter_mut()
            .for_each(|t| t.count = (t.count - 1).max(0));
    });
    on!(key, data; vm::Dispose, |r| {
        jvm.requests.clear();
        jvm.threads.iter_mut().for_each(|t| t.count = 0);
    });
    on!(key, data; vm::HoldEvents, |r| ());
    on!(key, data; vm::ReleaseEvents, |r| ());
    on!(key, data; vm::DisposeObjects, |r| ());
    on!(key, data; vm::CreateString, |r| ObjectId(jvm.new_string(&r.utf)));
    on!(key, data; vm::ClassesBySignature, |r| jvm
        .class_by_signature(&r.signature)
        .map(|c| MatchingClass {
            ref_type: tagged(c),
            status: ready(),
        })
        .into_iter()
        .collect());
    on!(key, data; vm::AllClasses, |r| jvm
        .classes
        .iter()
        .map(|c| ClassInfo {
            ref_type: tagged(c),
            signature: c.signature.clone(),
            status: ready(),
        })
        .collect());
    on!(key, data; vm::AllClassesWithGeneric, |r| jvm
        .classes
        .iter()
        .map(|c| GenericClassInfo {
            ref_type: tagged(c),
            signature: c.signature.clone(),
            generic_signature: String::new(),
            status: ready(),
        })
        .collect());
    // Capabilities: none (no redefinition, no field watches, no returns).
    if key
        == (
            <vm::Capabilities as Command>::SET,
            <vm::Capabilities as Command>::ID,
        )
    {
        return Ok(Some(vec![0; 7]));
    }
    if key
        == (
            <vm::CapabilitiesNew as Command>::SET,
            <vm::CapabilitiesNew as Command>::ID,
        )
    {
        return Ok(Some(vec![0; 32]));
    }
    Ok(None)
}

/// ReferenceType, ClassType and Method commands.
fn types(jvm: &mut Jvm, key: (u8, u8), data: &[u8]) -> Result<Option<Vec<u8>>, u16> {
    on!(key, data; rt::Signature, |r| class_of(jvm, r.ref_type)?.signature.clone());
    on!(key, data; rt::SignatureWithGeneric, |r| SignatureWithGenericReply {
        signature: class_of(jvm, r.ref_type)?.signature.clone(),
        generic_signature: String::new(),
    });
    on!(key, data; rt::ClassLoader, |r| {
        class_of(jvm, r.ref_type)?;
        ObjectId(0)
    });
    on!(key, data; rt::Modifiers, |r| {
        class_of(jvm, r.ref_type)?;
        0x1
    });
    on!(key, data; rt::Status, |r| {
        class_of(jvm, r.ref_type)?;
        ready()
    });
    on!(key, data; rt::SourceFile, |r| class_of(jvm, r.ref_type)?.source.clone());
    on!(key, data; rt::Interfaces, |r| {
        class_of(jvm, r.ref_type)?;
        Vec::new()
    });
    on!(key, data; rt::NestedTypes, |r| {
        class_of(jvm, r.ref_type)?;
        Vec::new()
    });
    on!(key, data; class_type::Superclass, |r| ReferenceTypeId(
        class_of(jvm, r.class)?.superclass
    ));
    on!(key, data; rt::Fields, |r| class_of(jvm, r.ref_type)?
        .fields
        .iter()
        .map(|f| FieldInfo {
            field_id: jvmscope::jdwp::FieldId(f.id),
            name: f.name.clone(),
            signature: f.signature.clone(),
            mod_bits: f.mods,
        })
        .collect());
    on!(key, data; rt::FieldsWithGeneric, |r| class_of(jvm, r.ref_type)?
        .fields
        .iter()
        .map(|f| FieldInfoWithGeneric {
            field_id: jvmscope::jdwp::FieldId(f.id),
            name: f.name.clone(),
            signature: f.signature.clone(),
            generic_signature: String::new(),
            mod_bits: f.mods,
        })
        .collect());
    on!(key, data; rt::Methods, |r| class_of(jvm, r.ref_type)?
        .methods
        .iter()
        .map(|m| MethodInfo {
            method_id: MethodId(m.id),
            name: m.name.clone(),
            signature: m.signature.clone(),
            mod_bits: m.mods,
        })
        .collect());
    on!(key, data; rt::MethodsWithGeneric, |r| class_of(jvm, r.ref_type)?
        .methods
        .iter()
        .map(|m| MethodInfoWithGeneric {
            method_id: MethodId(m.id),
            name: m.name.clone(),
            signature: m.signature.clone(),
            generic_signature: String::new(),
            mod_bits: m.mods,
        })
        .collect());
    on!(key, data; rt::GetValues, |r| {
        let c = class_of(jvm, r.ref_type)?;
        let mut out = Vec::new();
        for f in &r.fields {
            let field = c.fields.iter().find(|x| x.id == f.0);
            out.push(field.and_then(|x| x.value).ok_or(code::ILLEGAL_ARGUMENT)?);
        }
        out
    });
    Ok(None)
}

/// Method commands: line and variable tables.
fn methods(jvm: &mut Jvm, key: (u8, u8), data: &[u8]) -> Result<Option<Vec<u8>>, u16> {
    on!(key, data; LineTable, |r| {
        let m = jvm.method(r.ref_type.0, r.method.0).ok_or(code::INVALID_METHODID)?;
        LineTableReply {
            start: 0,
            end: m.end,
            lines: m
                .lines
                .iter()
                .map(|&(line_code_index, line_number)| LineEntry {
                    line_code_index,
                    line_number,
                })
                .collect(),
        }
    });
    on!(key, data; VariableTable, |r| {
        let m = jvm.method(r.ref_type.0, r.method.0).ok_or(code::INVALID_METHODID)?;
        VariableTableReply {
            arg_cnt: m.arg_cnt,
            slots: m
                .vars
                .iter()
                .map(|v| Variable {
                    code_index: v.start,
                    name: v.name.clone(),
                    signature: v.signature.clone(),
                    length: v.length,
                    slot: v.slot,
                })
                .collect(),
        }
    });
    on!(key, data; VariableTableWithGeneric, |r| {
        let m = jvm.method(r.ref_type.0, r.method.0).ok_or(code::INVALID_METHODID)?;
        if m.vars.is_empty() {
            return Err(code::ABSENT_INFORMATION);
        }
        VariableTableWithGenericReply {
            arg_cnt: m.arg_cnt,
            slots: m
                .vars
                .iter()
                .map(|v| VariableWithGeneric {
                    code_index: v.start,
                    name: v.name.clone(),
                    signature: v.signature.clone(),
                    generic_signature: String::new(),
                    length: v.length,
                    slot: v.slot,
                })
                .collect(),
        }
    });
    on!(key, data; IsObsolete, |r| false);
    Ok(None)
}

/// EventRequest commands: requests are kept in the model, as set.
fn requests(jvm: &mut Jvm, key: (u8, u8), data: &[u8]) -> Result<Option<Vec<u8>>, u16> {
    on!(key, data; er::Set, |r| {
        let id = jvm.next_request;
        jvm.next_request += 1;
        jvm.requests.push(Request {
            id,
            kind: r.event_kind,
            policy: r.suspend_policy,
            modifiers: r.modifiers,
            seen: 0,
            spent: false,
        });
        RequestId(id)
    });
    on!(key, data; er::Clear, |r| jvm
        .requests
        .retain(|q| !(q.kind == r.event_kind && q.id == r.request_id.0)));
    on!(key, data; er::ClearAllBreakpoints, |r| jvm
        .requests
        .retain(|q| q.kind != EventKind::Breakpoint));
    Ok(None)
}
