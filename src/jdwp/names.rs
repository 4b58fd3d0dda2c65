//! `command_name`: the "CommandSet.Command" name of any (set, command)
//! pair, for span names on packets that have not been decoded into a type.

/// "CommandSet.Command" as the specification spells it, "Event.Composite"
/// for 64/100, "Unknown" for anything else.
pub fn command_name(set: u8, cmd: u8) -> &'static str {
    match (set, cmd) {
        (0x01, 0x01) => "VirtualMachine.Version",
        (0x01, 0x02) => "VirtualMachine.ClassesBySignature",
        (0x01, 0x03) => "VirtualMachine.AllClasses",
        (0x01, 0x04) => "VirtualMachine.AllThreads",
        (0x01, 0x05) => "VirtualMachine.TopLevelThreadGroups",
        (0x01, 0x06) => "VirtualMachine.Dispose",
        (0x01, 0x07) => "VirtualMachine.IDSizes",
        (0x01, 0x08) => "VirtualMachine.Suspend",
        (0x01, 0x09) => "VirtualMachine.Resume",
        (0x01, 0x0A) => "VirtualMachine.Exit",
        (0x01, 0x0B) => "VirtualMachine.CreateString",
        (0x01, 0x0C) => "VirtualMachine.Capabilities",
        (0x01, 0x0D) => "VirtualMachine.ClassPaths",
        (0x01, 0x0E) => "VirtualMachine.DisposeObjects",
        (0x01, 0x0F) => "VirtualMachine.HoldEvents",
        (0x01, 0x10) => "VirtualMachine.ReleaseEvents",
        (0x01, 0x11) => "VirtualMachine.CapabilitiesNew",
        (0x01, 0x12) => "VirtualMachine.RedefineClasses",
        (0x01, 0x13) => "VirtualMachine.SetDefaultStratum",
        (0x01, 0x14) => "VirtualMachine.AllClassesWithGeneric",
        (0x01, 0x15) => "VirtualMachine.InstanceCounts",
        (0x01, 0x16) => "VirtualMachine.AllModules",

        (0x02, 0x01) => "ReferenceType.Signature",
        (0x02, 0x02) => "ReferenceType.ClassLoader",
        (0x02, 0x03) => "ReferenceType.Modifiers",
        (0x02, 0x04) => "ReferenceType.Fields",
        (0x02, 0x05) => "ReferenceType.Methods",
        (0x02, 0x06) => "ReferenceType.GetValues",
        (0x02, 0x07) => "ReferenceType.SourceFile",
        (0x02, 0x08) => "ReferenceType.NestedTypes",
        (0x02, 0x09) => "ReferenceType.Status",
        (0x02, 0x0A) => "ReferenceType.Interfaces",
        (0x02, 0x0B) => "ReferenceType.ClassObject",
        (0x02, 0x0C) => "ReferenceType.SourceDebugExtension",
        (0x02, 0x0D) => "ReferenceType.SignatureWithGeneric",
        (0x02, 0x0E) => "ReferenceType.FieldsWithGeneric",
        (0x02, 0x0F) => "ReferenceType.MethodsWithGeneric",
        (0x02, 0x10) => "ReferenceType.Instances",
        (0x02, 0x11) => "ReferenceType.ClassFileVersion",
        (0x02, 0x12) => "ReferenceType.ConstantPool",
        (0x02, 0x13) => "ReferenceType.Module",

        (0x03, 0x01) => "ClassType.Superclass",
        (0x03, 0x02) => "ClassType.SetValues",
        (0x03, 0x03) => "ClassType.InvokeMethod",
        (0x03, 0x04) => "ClassType.NewInstance",

        (0x04, 0x01) => "ArrayType.NewInstance",

        (0x05, 0x01) => "InterfaceType.InvokeMethod",

        (0x06, 0x01) => "Method.LineTable",
        (0x06, 0x02) => "Method.VariableTable",
        (0x06, 0x03) => "Method.Bytecodes",
        (0x06, 0x04) => "Method.IsObsolete",
        (0x06, 0x05) => "Method.VariableTableWithGeneric",

        (0x09, 0x01) => "ObjectReference.ReferenceType",
        (0x09, 0x02) => "ObjectReference.GetValues",
        (0x09, 0x03) => "ObjectReference.SetValues",
        (0x09, 0x05) => "ObjectReference.MonitorInfo",
        (0x09, 0x06) => "ObjectReference.InvokeMethod",
        (0x09, 0x07) => "ObjectReference.DisableCollection",
        (0x09, 0x08) => "ObjectReference.EnableCollection",
        (0x09, 0x09) => "ObjectReference.IsCollected",
        (0x09, 0x0A) => "ObjectReference.ReferringObjects",

        (0x0A, 0x01) => "StringReference.Value",

        (0x0B, 0x01) => "ThreadReference.Name",
        (0x0B, 0x02) => "ThreadReference.Suspend",
        (0x0B, 0x03) => "ThreadReference.Resume",
        (0x0B, 0x04) => "ThreadReference.Status",
        (0x0B, 0x05) => "ThreadReference.ThreadGroup",
        (0x0B, 0x06) => "ThreadReference.Frames",
        (0x0B, 0x07) => "ThreadReference.FrameCount",
        (0x0B, 0x08) => "ThreadReference.OwnedMonitors",
        (0x0B, 0x09) => "ThreadReference.CurrentContendedMonitor",
        (0x0B, 0x0A) => "ThreadReference.Stop",
        (0x0B, 0x0B) => "ThreadReference.Interrupt",
        (0x0B, 0x0C) => "ThreadReference.SuspendCount",
        (0x0B, 0x0D) => "ThreadReference.OwnedMonitorsStackDepthInfo",
        (0x0B, 0x0E) => "ThreadReference.ForceEarlyReturn",
        (0x0B, 0x0F) => "ThreadReference.IsVirtual",

        (0x0C, 0x01) => "ThreadGroupReference.Name",
        (0x0C, 0x02) => "ThreadGroupReference.Parent",
        (0x0C, 0x03) => "ThreadGroupReference.Children",

        (0x0D, 0x01) => "ArrayReference.Length",
        (0x0D, 0x02) => "ArrayReference.GetValues",
        (0x0D, 0x03) => "ArrayReference.SetValues",

        (0x0E, 0x01) => "ClassLoaderReference.VisibleClasses",

        (0x0F, 0x01) => "EventRequest.Set",
        (0x0F, 0x02) => "EventRequest.Clear",
        (0x0F, 0x03) => "EventRequest.ClearAllBreakpoints",

        (0x10, 0x01) => "StackFrame.GetValues",
        (0x10, 0x02) => "StackFrame.SetValues",
        (0x10, 0x03) => "StackFrame.ThisObject",
        (0x10, 0x04) => "StackFrame.PopFrames",

        (0x11, 0x01) => "ClassObjectReference.ReflectedType",

        (0x12, 0x01) => "ModuleReference.Name",
        (0x12, 0x02) => "ModuleReference.ClassLoader",

        (0x40, 0x64) => "Event.Composite",

        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::command_name;
    use crate::jdwp::command::Command;
    use crate::jdwp::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Every command type, by module.
    macro_rules! each_command {
        ($f:ident) => {
            each_command!($f, virtual_machine: Version, ClassesBySignature, AllClasses,
                AllThreads, TopLevelThreadGroups, Dispose, IdSizesCmd, Suspend, Resume, Exit,
                CreateString, Capabilities, ClassPaths, DisposeObjects, HoldEvents,
                ReleaseEvents, CapabilitiesNew, RedefineClasses, SetDefaultStratum,
                AllClassesWithGeneric, InstanceCounts, AllModules);
            each_command!($f, reference_type: Signature, ClassLoader, Modifiers, Fields,
                Methods, GetValues, SourceFile, NestedTypes, Status, Interfaces, ClassObject,
                SourceDebugExtension, SignatureWithGeneric, FieldsWithGeneric,
                MethodsWithGeneric, Instances, ClassFileVersion, ConstantPool, Module);
            each_command!($f, class_type: Superclass, SetValues, InvokeMethod, NewInstance);
            each_command!($f, array_type: NewInstance);
            each_command!($f, interface_type: InvokeMethod);
            each_command!($f, method: LineTable, VariableTable, Bytecodes, IsObsolete,
                VariableTableWithGeneric);
            each_command!($f, object_reference: ReferenceType, GetValues, SetValues,
                MonitorInfo, InvokeMethod, DisableCollection, EnableCollection, IsCollected,
                ReferringObjects);
            each_command!($f, string_reference: Value);
            each_command!($f, thread_reference: Name, Suspend, Resume, Status, ThreadGroup,
                Frames, FrameCount, OwnedMonitors, CurrentContendedMonitor, Stop, Interrupt,
                SuspendCount, OwnedMonitorsStackDepthInfo, ForceEarlyReturn, IsVirtual);
            each_command!($f, thread_group_reference: Name, Parent, Children);
            each_command!($f, array_reference: Length, GetValues, SetValues);
            each_command!($f, class_loader_reference: VisibleClasses);
            each_command!($f, event_request: Set, Clear, ClearAllBreakpoints);
            each_command!($f, stack_frame: GetValues, SetValues, ThisObject, PopFrames);
            each_command!($f, class_object_reference: ReflectedType);
            each_command!($f, module_reference: Name, ClassLoader);
        };
        ($f:ident, $module:ident: $($cmd:ident),+) => {
            $($f::<$module::$cmd>();)+
        };
    }

    static CHECKED: AtomicUsize = AtomicUsize::new(0);

    fn agrees<C: Command>() {
        assert_eq!(command_name(C::SET, C::ID), C::NAME, "{}/{}", C::SET, C::ID);
        CHECKED.fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn every_command_name_agrees_and_the_table_has_nothing_else() {
        each_command!(agrees);
        assert_eq!(
            command_name(event::Composite::SET, event::Composite::ID),
            event::Composite::NAME
        );
        let named = (0..=u8::MAX)
            .flat_map(|set| (0..=u8::MAX).map(move |cmd| (set, cmd)))
            .filter(|&(set, cmd)| command_name(set, cmd) != "Unknown")
            .count();
        // Every named pair is a command type (all distinct, since each one
        // agrees with its own name) or the composite.
        assert_eq!(named, CHECKED.load(Ordering::Relaxed) + 1);
        assert_eq!(named, 95);
        assert_eq!(command_name(0x09, 0x04), "Unknown");
        assert_eq!(command_name(0x40, 0x01), "Unknown");
    }
}
