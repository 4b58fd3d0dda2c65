//! The JDWP codec, sans-IO: framing, the handshake, typed commands and
//! replies, events and error codes. No sockets, no clock, no async here —
//! the Connection actor does the I/O.
//!
//! One file per command set, named as in the specification; each command is
//! a struct implementing [`Command`] (and [`Decode`], to read a request
//! back), each reply implements [`Decode`] and [`Encode`].

#[macro_use]
mod macros;
#[cfg(test)]
#[macro_use]
pub(crate) mod testing;

pub mod command;
pub mod constants;
pub mod error;
pub mod ids;
pub mod names;
pub mod packet;
pub mod value;
pub mod wire;

pub mod array_reference;
pub mod array_type;
pub mod class_loader_reference;
pub mod class_object_reference;
pub mod class_type;
pub mod event;
pub mod event_request;
pub mod interface_type;
pub mod method;
pub mod module_reference;
pub mod object_reference;
pub mod reference_type;
pub mod stack_frame;
pub mod string_reference;
pub mod thread_group_reference;
pub mod thread_reference;
pub mod virtual_machine;

pub use array_reference::ArrayRegion;
pub use class_type::InvokeMethodReply;
pub use command::{
    Command, Decode, Encode, command_name, decode_all, decode_reply, decode_request,
    decode_request_with_tags, encode_reply, encode_request,
};
pub use constants::{
    ClassStatus, EventKind, InvokeOptions, StepDepth, StepSize, SuspendPolicy, SuspendStatus,
    ThreadStatus,
};
pub use error::ErrorCode;
pub use event::{Composite, Event, Salvage};
pub use event_request::Modifier;
pub use ids::*;
pub use packet::{CommandPacket, FrameDecoder, FrameError, Packet, ReplyPacket};
pub use thread_reference::FrameInfo;
pub use value::{FieldValue, Location, Tag, TaggedObjectId, TaggedTypeId, TypeTag, Value};
pub use wire::{DecodeError, IdSizes, Reader, Writer};
