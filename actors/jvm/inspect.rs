//! Reading a suspended thread: its frames (class, method and line
//! resolved through the class cache), a frame's locals, `this`, and a
//! one-line rendering of any value that invokes nothing. Stack views, trace
//! capture and evaluation all read through here, so the reads are written
//! once and pipelined once.

use std::sync::Arc;

use futures::future::join_all;

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::stack_frame::{GetValues, SlotRequest, ThisObject};
use crate::jdwp::thread_reference::{FrameCount, Frames};
use crate::jdwp::{ErrorCode, FrameId, FrameInfo, Location, ObjectId, Tag, ThreadId, Value};
use crate::jvm::classes::{ClassCache, ClassInfo, MethodInfo, Variables};
use crate::jvm::eval::BOXES;
use crate::jvm::show::{unreadable, wire_scalar};
use crate::model::shown::{Cut, Elements, Shown};

/// One frame of a suspended thread.
#[derive(Debug, Clone)]
pub struct FrameView {
    pub index: usize,
    pub id: FrameId,
    pub location: Location,
    pub class: Arc<ClassInfo>,
    pub method: Option<MethodInfo>,
    pub line: Option<i32>,
}

impl FrameView {
    /// `com.acme.Foo.bar:42` (line `?` when unknown, `native` for natives).
    pub fn label(&self) -> String {
        crate::model::label::CodeLabel::frame(
            &self.class.name,
            self.method.as_ref().map(|m| m.name.as_str()),
            self.method.as_ref().is_some_and(|m| m.is_native()),
            self.line.map(i64::from),
        )
        .to_string()
    }
}

/// Reads up to `count` frames from `start` (all when `None`), in one
/// round trip when the stack is deep enough.
pub async fn frames(
    classes: &ClassCache,
    thread: ThreadId,
    start: usize,
    count: Option<usize>,
) -> Result<Vec<FrameView>, JdwpError> {
    let conn = classes.connection();
    let Some(count) = count else {
        let raw = rest_request(conn, thread, start).await?;
        return resolve(classes, start, &raw).await;
    };
    let reply = frames_request(conn, thread, start, count);
    Ok(frames_from(classes, thread, start, count, reply, None)
        .await?
        .0)
}

/// A `Frames` request for `count` frames from `start`, queued on the wire
/// when this is called, so other commands can be sent right behind it.
pub fn frames_request(
    conn: &ConnectionHandle,
    thread: ThreadId,
    start: usize,
    count: usize,
) -> impl Future<Output = Result<Vec<FrameInfo>, JdwpError>> + Send + 'static + use<> {
    conn.send(&Frames {
        thread,
        start_frame: start.min(i32::MAX as usize) as i32,
        length: count.min(i32::MAX as usize) as i32,
    })
}

/// Asks for every frame from `start` down to the bottom of the stack.
fn rest_request(
    conn: &ConnectionHandle,
    thread: ThreadId,
    start: usize,
) -> impl Future<Output = Result<Vec<FrameInfo>, JdwpError>> + Send + 'static + use<> {
    conn.send(&Frames {
        thread,
        start_frame: start.min(i32::MAX as usize) as i32,
        length: Frames::ALL,
    })
}

/// The frames of a request sent with [`frames_request`], resolved.
/// Returns the frames, and the depth when it was read (see
/// [`raw_frames_from`]).
pub async fn frames_from(
    classes: &ClassCache,
    thread: ThreadId,
    start: usize,
    count: usize,
    reply: impl Future<Output = Result<Vec<FrameInfo>, JdwpError>>,
    depth: Option<i32>,
) -> Result<(Vec<FrameView>, Option<i32>), JdwpError> {
    let conn = classes.connection();
    let (raw, depth) = raw_frames_from(conn, thread, start, count, reply, depth).await?;
    Ok((resolve(classes, start, &raw).await?, depth))
}

/// The raw frames of a request sent with [`frames_request`]. JDWP refuses
/// a window past the end of the stack (`INVALID_LENGTH`, or
/// `INVALID_INDEX` for a start at or past it). Then, with the depth known
/// (`depth`), the window that is there is asked for; without it, the rest
/// of the stack from `start` is read and cut to `count`, which gives the
/// depth too, in one round trip (a hot line of a shallow stack pays one,
/// not two). Returns the frames, and the depth when it was learnt.
pub async fn raw_frames_from(
    conn: &ConnectionHandle,
    thread: ThreadId,
    start: usize,
    count: usize,
    reply: impl Future<Output = Result<Vec<FrameInfo>, JdwpError>>,
    depth: Option<i32>,
) -> Result<(Vec<FrameInfo>, Option<i32>), JdwpError> {
    let past_the_end = |e: &JdwpError| {
        matches!(
            e.code(),
            Some(ErrorCode::INVALID_LENGTH | ErrorCode::INVALID_INDEX)
        )
    };
    match reply.await {
        Ok(raw) => Ok((raw, depth)),
        Err(e) if past_the_end(&e) => {
            if let Some(depth) = depth {
                let there = (depth.max(0) as usize).saturating_sub(start);
                if there == 0 {
                    return Ok((Vec::new(), Some(depth)));
                }
                let raw = frames_request(conn, thread, start, count.min(there)).await?;
                return Ok((raw, Some(depth)));
            }
            let rest = rest_request(conn, thread, start).await;
            match rest {
                Ok(mut raw) => {
                    let depth = (start + raw.len()).min(i32::MAX as usize) as i32;
                    raw.truncate(count);
                    Ok((raw, Some(depth)))
                }
                // The start itself is past the end: only the depth is left.
                Err(e) if past_the_end(&e) => {
                    let depth = conn.send(&FrameCount { thread }).await?;
                    Ok((Vec::new(), Some(depth)))
                }
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// Class, method and line of each raw frame, through the class cache.
async fn resolve(
    classes: &ClassCache,
    start: usize,
    raw: &[FrameInfo],
) -> Result<Vec<FrameView>, JdwpError> {
    let resolved = join_all(raw.iter().map(|f| async move {
        let class = classes.info(f.location.class);
        let method = classes.method(f.location.class, f.location.method);
        let lines = classes.lines(f.location.class, f.location.method);
        let (class, method, lines) = futures::join!(class, method, lines);
        (class, method, lines)
    }))
    .await;
    let mut out = Vec::with_capacity(raw.len());
    for (i, (f, (class, method, lines))) in raw.iter().zip(resolved).enumerate() {
        let class = class?;
        let method = method?;
        let line = lines.ok().and_then(|l| l.line_of(f.location.index as i64));
        out.push(FrameView {
            index: start + i,
            id: f.frame_id,
            location: f.location,
            class,
            method,
            line,
        });
    }
    Ok(out)
}

/// A local variable with its value.
#[derive(Debug, Clone)]
pub struct LocalView {
    pub name: String,
    /// JNI signature of the declared type.
    pub signature: String,
    /// Generic signature of the declared type, empty when none.
    pub generic: String,
    pub value: Value,
}

/// The locals of a frame, or why there are none.
#[derive(Debug, Clone)]
pub enum Locals {
    Known(Vec<LocalView>),
    /// The class was compiled without `-g` (or the method is native).
    Absent,
}

/// Reads the locals live at the frame's location (only those named in
/// `only`, when given). All slots go in one `StackFrame.GetValues`.
pub async fn locals(
    classes: &ClassCache,
    thread: ThreadId,
    frame: &FrameView,
    only: Option<&[String]>,
) -> Result<Locals, JdwpError> {
    let vars = classes
        .variables(frame.location.class, frame.location.method)
        .await?;
    let Variables::Known { vars, .. } = vars.as_ref() else {
        return Ok(Locals::Absent);
    };
    let index = frame.location.index as i64;
    let mut live: Vec<_> = vars
        .iter()
        .filter(|v| v.live_at(index))
        .filter(|v| only.is_none_or(|names| names.contains(&v.name)))
        .collect();
    live.sort_by_key(|v| v.slot);
    if live.is_empty() {
        return Ok(Locals::Known(Vec::new()));
    }
    let slots = live
        .iter()
        .map(|v| SlotRequest {
            slot: v.slot,
            sig_byte: Tag::from_signature(&v.signature),
        })
        .collect();
    let values = classes
        .connection()
        .send(&GetValues {
            thread,
            frame: frame.id,
            slots,
        })
        .await?;
    Ok(Locals::Known(
        live.into_iter()
            .zip(values)
            .map(|(v, value)| LocalView {
                name: v.name.clone(),
                signature: v.signature.clone(),
                generic: v.generic.clone(),
                value,
            })
            .collect(),
    ))
}

/// `this` of a frame; null (id 0) in a static or native method.
pub async fn this_object(
    classes: &ClassCache,
    thread: ThreadId,
    frame: &FrameView,
) -> Result<ObjectId, JdwpError> {
    if frame.method.as_ref().is_some_and(|m| m.is_static()) {
        return Ok(ObjectId(0));
    }
    match classes
        .connection()
        .send(&ThisObject {
            thread,
            frame: frame.id,
        })
        .await
    {
        Ok(t) => Ok(t.id),
        Err(e) if e.code() == Some(ErrorCode::OPAQUE_FRAME) => Ok(ObjectId(0)),
        Err(e) => Err(e),
    }
}

/// Reads a value for one line without invoking anything: primitives and
/// strings inline, arrays with their length, boxed numbers and enum
/// constants by value, other objects with their type.
pub async fn show(classes: &ClassCache, value: &Value, max_len: usize) -> Shown {
    if let Some(p) = wire_scalar(value) {
        return Shown::Scalar(p);
    }
    let Value::Object { tag, id } = *value else {
        return Shown::Unknown;
    };
    let conn = classes.connection();
    if tag == Tag::String {
        return match conn
            .send(&crate::jdwp::string_reference::Value { string_object: id })
            .await
        {
            Ok(s) => Shown::Text(Cut::new(&s, max_len)),
            Err(e) => unreadable(&e, id.0, None),
        };
    }
    let type_name = match classes.type_of(id).await {
        Ok(t) => match classes.info(t.id).await {
            Ok(info) => info.name.clone(),
            Err(_) => "?".into(),
        },
        Err(e) => return unreadable(&e, id.0, None),
    };
    if tag == Tag::Array
        && let Ok(len) = conn
            .send(&crate::jdwp::array_reference::Length { array: id })
            .await
    {
        return Shown::Array {
            elem: type_name
                .strip_suffix("[]")
                .unwrap_or(&type_name)
                .to_string(),
            id: id.0,
            len,
            elements: Elements::NotRead,
        };
    }
    // A boxed number and an enum constant read as their value (a packet
    // or two); any other object as its type.
    if BOXES.contains(&type_name.as_str()) {
        return super::show::unboxed(classes, id.0, type_name).await;
    }
    if let Some(constant) = super::show::enum_constant(classes, id.0).await {
        return Shown::Enum {
            constant,
            type_name,
            id: id.0,
        };
    }
    Shown::Object {
        type_name,
        id: id.0,
        to_string: None,
    }
}

/// The declared type of a local or field as the reader wants it: the
/// generic form when the class file has one (and it parses), else the
/// erased name.
pub use crate::model::java_source::type_name as declared_type;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_signatures_render_as_source() {
        assert_eq!(
            declared_type("Ljava/lang/Object;", "Ljava/util/List<Lcom/acme/Order;>;"),
            "java.util.List<com.acme.Order>"
        );
        assert_eq!(
            declared_type(
                "Ljava/lang/Object;",
                "Ljava/util/Map<Ljava/lang/String;Ljava/util/List<Ljava/lang/Integer;>;>;"
            ),
            "java.util.Map<java.lang.String, java.util.List<java.lang.Integer>>"
        );
        assert_eq!(declared_type("Ljava/lang/Object;", "TT;"), "T");
        assert_eq!(
            declared_type(
                "Ljava/lang/Object;",
                "Ljava/util/List<+Ljava/lang/Number;>;"
            ),
            "java.util.List<? extends java.lang.Number>"
        );
        assert_eq!(
            declared_type("Ljava/lang/Object;", "[Ljava/util/List<*>;"),
            "java.util.List<?>[]"
        );
    }
}
