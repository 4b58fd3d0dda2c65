//! `command_name`: the "CommandSet.Command" name of any (set, command)
//! pair, for span names on packets that have not been decoded into a type.
//! The names come from the one table each command set's `command!` block
//! generates (`COMMANDS`); nothing here repeats a command number.

use super::{
    array_reference, array_type, class_loader_reference, class_object_reference, class_type, event,
    event_request, interface_type, method, module_reference, object_reference, reference_type,
    stack_frame, string_reference, thread_group_reference, thread_reference, virtual_machine,
};

/// Every command set's table, in set order.
const SETS: &[&[(u8, u8, &str)]] = &[
    virtual_machine::COMMANDS,
    reference_type::COMMANDS,
    class_type::COMMANDS,
    array_type::COMMANDS,
    interface_type::COMMANDS,
    method::COMMANDS,
    object_reference::COMMANDS,
    string_reference::COMMANDS,
    thread_reference::COMMANDS,
    thread_group_reference::COMMANDS,
    array_reference::COMMANDS,
    class_loader_reference::COMMANDS,
    event_request::COMMANDS,
    stack_frame::COMMANDS,
    class_object_reference::COMMANDS,
    module_reference::COMMANDS,
];

/// "CommandSet.Command" as the specification spells it, "Event.Composite"
/// for 64/100, "Unknown" for anything else.
pub fn command_name(set: u8, cmd: u8) -> &'static str {
    if (set, cmd) == (event::Composite::SET, event::Composite::ID) {
        return event::Composite::NAME;
    }
    SETS.iter()
        .find(|table| table.first().is_some_and(|c| c.0 == set))
        .and_then(|table| table.iter().find(|c| c.1 == cmd))
        .map_or("Unknown", |c| c.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command as _;

    #[test]
    fn every_command_is_named_once_under_its_own_set() {
        let mut seen = std::collections::HashSet::new();
        for table in SETS {
            let set = table[0].0;
            let prefix = table[0].2.split('.').next().unwrap_or("");
            for &(s, c, name) in *table {
                assert_eq!(s, set, "{name} sits in the table of set {set}");
                assert!(name.starts_with(prefix), "{name} in {prefix}");
                assert!(seen.insert((s, c)), "{s}/{c} is named twice");
                assert_eq!(command_name(s, c), name);
            }
        }
        assert_eq!(seen.len(), 94);
        assert_eq!(
            command_name(event::Composite::SET, event::Composite::ID),
            event::Composite::NAME
        );
        assert_eq!(
            command_name(virtual_machine::Version::SET, virtual_machine::Version::ID),
            virtual_machine::Version::NAME
        );
        assert_eq!(command_name(0x09, 0x04), "Unknown");
        assert_eq!(command_name(0x40, 0x01), "Unknown");
    }
}
