//! Command set 10, StringReference: a string object's characters.

use super::ids::ObjectId;

command! {
    /// StringReference.Value (10/1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Value {
        pub string_object: ObjectId,
    }
    => (0x0A, 0x01, "StringReference.Value") -> String;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::decode_reply;
    use crate::testing::FOUR;

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let bytes = [0, 0, 0, 3, b'a', 0xC0, b'b'];
        let s = decode_reply::<Value>(&bytes, FOUR).expect("decodes");
        assert!(s.starts_with('a') && s.ends_with('b'));
    }

    command_tests!(Value);
}
