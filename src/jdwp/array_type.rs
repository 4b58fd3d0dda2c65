//! Command set 4, ArrayType: creating arrays.

use super::ids::ReferenceTypeId;
use super::value::TaggedObjectId;

command! {
    /// ArrayType.NewInstance (4/1): a new array of this array type, its
    /// components set to their default values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NewInstance {
        pub array_type: ReferenceTypeId,
        pub length: i32,
    }
    => (0x04, 0x01, "ArrayType.NewInstance") -> TaggedObjectId;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::encode_request;
    use crate::testing::FOUR;

    #[test]
    fn new_instance_layout() {
        let cmd = NewInstance {
            array_type: ReferenceTypeId(0x10),
            length: 3,
        };
        assert_eq!(encode_request(&cmd, FOUR), [0, 0, 0, 0x10, 0, 0, 0, 3]);
    }

    command_tests!(NewInstance);
}
