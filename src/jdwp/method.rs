//! Command set 6, Method: line tables, local variable tables, bytecodes
//! and obsolescence of a method.

use super::ids::{MethodId, ReferenceTypeId};

command! {
    /// Method.LineTable (6/1): code index ↔ source line
    /// (`ABSENT_INFORMATION` without debug info, `NATIVE_METHOD` for
    /// native methods).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct LineTable {
        pub ref_type: ReferenceTypeId,
        pub method: MethodId,
    }
    => (0x06, 0x01, "Method.LineTable") -> LineTableReply;

    /// Method.VariableTable (6/2): local variables, arguments first.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct VariableTable {
        pub ref_type: ReferenceTypeId,
        pub method: MethodId,
    }
    => (0x06, 0x02, "Method.VariableTable") -> VariableTableReply;

    /// Method.Bytecodes (6/3).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Bytecodes {
        pub ref_type: ReferenceTypeId,
        pub method: MethodId,
    }
    => (0x06, 0x03, "Method.Bytecodes") -> Vec<u8>;

    /// Method.IsObsolete (6/4): true once the method was redefined away.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct IsObsolete {
        pub ref_type: ReferenceTypeId,
        pub method: MethodId,
    }
    => (0x06, 0x04, "Method.IsObsolete") -> bool;

    /// Method.VariableTableWithGeneric (6/5).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct VariableTableWithGeneric {
        pub ref_type: ReferenceTypeId,
        pub method: MethodId,
    }
    => (0x06, 0x05, "Method.VariableTableWithGeneric") -> VariableTableWithGenericReply;
}

wire_struct! {
    /// The reply to `LineTable`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct LineTableReply {
        /// Lowest valid code index, or -1 for a native method.
        pub start: i64,
        /// Highest valid code index, or -1 for a native method.
        pub end: i64,
        pub lines: Vec<LineEntry>,
    }
}

wire_struct! {
    /// One line of a line table: code from `line_code_index` on belongs to
    /// `line_number` (until the next entry's index).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct LineEntry {
        pub line_code_index: i64,
        pub line_number: i32,
    }
}

wire_struct! {
    /// The reply to `VariableTable`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct VariableTableReply {
        /// Words of arguments (longs and doubles count twice).
        pub arg_cnt: i32,
        pub slots: Vec<Variable>,
    }
}

wire_struct! {
    /// A local variable, live for code indexes
    /// `code_index..code_index + length`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Variable {
        pub code_index: i64,
        pub name: String,
        pub signature: String,
        pub length: i32,
        /// The slot for `StackFrame.GetValues`.
        pub slot: i32,
    }
}

wire_struct! {
    /// The reply to `VariableTableWithGeneric`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct VariableTableWithGenericReply {
        pub arg_cnt: i32,
        pub slots: Vec<VariableWithGeneric>,
    }
}

wire_struct! {
    /// A local variable with its generic signature.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct VariableWithGeneric {
        pub code_index: i64,
        pub name: String,
        pub signature: String,
        /// Empty when there is none.
        pub generic_signature: String,
        pub length: i32,
        pub slot: i32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::decode_reply;
    use crate::wire::IdSizes;

    #[test]
    fn line_table_decodes() {
        #[rustfmt::skip]
        let bytes = [
            0, 0, 0, 0, 0, 0, 0, 0, // start 0
            0, 0, 0, 0, 0, 0, 0, 9, // end 9
            0, 0, 0, 2, // two lines
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, // index 0 → line 3
            0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 4, // index 4 → line 4
        ];
        let reply = decode_reply::<LineTable>(&bytes, IdSizes::HOTSPOT).expect("decodes");
        assert_eq!(reply.end, 9);
        assert_eq!(
            reply.lines,
            [
                LineEntry {
                    line_code_index: 0,
                    line_number: 3
                },
                LineEntry {
                    line_code_index: 4,
                    line_number: 4
                }
            ]
        );
    }

    command_tests!(
        LineTable,
        VariableTable,
        Bytecodes,
        IsObsolete,
        VariableTableWithGeneric,
    );
}

/// Method.Bytecodes, as debug_check_stale compares them.
#[cfg(test)]
mod bytecode_tests {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;

    #[test]
    fn bytecodes_request_and_reply() {
        let cmd = Bytecodes {
            ref_type: ReferenceTypeId(7),
            method: MethodId(9),
        };
        assert_eq!(encode_request(&cmd, FOUR), [0, 0, 0, 7, 0, 0, 0, 9]);
        let reply = [0, 0, 0, 4, 0x1a, 0x05, 0x68, 0xac];
        assert_eq!(
            decode_reply::<Bytecodes>(&reply, FOUR).expect("decodes"),
            [0x1a, 0x05, 0x68, 0xac]
        );
        assert!(decode_reply::<Bytecodes>(&reply[..7], FOUR).is_err());
    }
}
