//! Command set 14, ClassLoaderReference: the types a class loader can see.

use super::ids::ObjectId;
use super::value::TaggedTypeId;

command! {
    /// ClassLoaderReference.VisibleClasses (14/1): types this loader
    /// initiated loading of (found by name through it).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct VisibleClasses {
        pub class_loader: ObjectId,
    }
    => (0x0E, 0x01, "ClassLoaderReference.VisibleClasses") -> Vec<TaggedTypeId>;
}

#[cfg(test)]
mod tests {
    use super::*;

    command_tests!(VisibleClasses);
}
