//! Command set 18, ModuleReference: a module's name and class loader.

use super::ids::{ModuleId, ObjectId};

command! {
    /// ModuleReference.Name (18/1): empty for an unnamed module.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Name {
        pub module: ModuleId,
    }
    => (0x12, 0x01, "ModuleReference.Name") -> String;

    /// ModuleReference.ClassLoader (18/2): null for the bootstrap loader.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ClassLoader {
        pub module: ModuleId,
    }
    => (0x12, 0x02, "ModuleReference.ClassLoader") -> ObjectId;
}

#[cfg(test)]
mod tests {
    use super::*;

    command_tests!(Name, ClassLoader);
}
