//! Command set 17, ClassObjectReference: the type a `java.lang.Class`
//! object stands for.

use super::ids::ObjectId;
use super::value::TaggedTypeId;

command! {
    /// ClassObjectReference.ReflectedType (17/1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ReflectedType {
        pub class_object: ObjectId,
    }
    => (0x11, 0x01, "ClassObjectReference.ReflectedType") -> TaggedTypeId;
}

#[cfg(test)]
mod tests {
    use super::*;

    command_tests!(ReflectedType);
}
