//! Command set 5, InterfaceType: invoking static interface methods.

use super::class_type::InvokeMethodReply;
use super::constants::InvokeOptions;
use super::ids::{MethodId, ReferenceTypeId, ThreadId};
use super::value::Value;

command! {
    /// InterfaceType.InvokeMethod (5/1): calls a static interface method,
    /// as `ClassType.InvokeMethod` does for classes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct InvokeMethod {
        pub interface: ReferenceTypeId,
        pub thread: ThreadId,
        pub method: MethodId,
        pub arguments: Vec<Value>,
        pub options: InvokeOptions,
    }
    => (0x05, 0x01, "InterfaceType.InvokeMethod") -> InvokeMethodReply;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::encode_request;
    use crate::testing::FOUR;

    #[test]
    fn arguments_are_tagged() {
        let cmd = InvokeMethod {
            interface: ReferenceTypeId(1),
            thread: ThreadId(2),
            method: MethodId(3),
            arguments: vec![Value::Boolean(true)],
            options: InvokeOptions::INVOKE_SINGLE_THREADED,
        };
        let bytes = encode_request(&cmd, FOUR);
        assert_eq!(bytes[12..], [0, 0, 0, 1, b'Z', 1, 0, 0, 0, 1]);
    }

    command_tests!(InvokeMethod);
}
