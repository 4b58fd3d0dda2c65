//! The specification's constant sets: event kinds, suspend policies, step
//! sizes and depths, thread and suspend status, class status and invoke
//! options. `Tag` and `TypeTag` live in `value.rs` with the values they tag.

wire_enum! {
    /// JDWP `EventKind`: what an event request asks for and what an event
    /// reports. `VmDisconnected` is never sent over the wire.
    pub enum EventKind: u8 {
        SingleStep = 1,
        Breakpoint = 2,
        FramePop = 3,
        Exception = 4,
        UserDefined = 5,
        ThreadStart = 6,
        /// Also called `THREAD_END`.
        ThreadDeath = 7,
        ClassPrepare = 8,
        ClassUnload = 9,
        ClassLoad = 10,
        FieldAccess = 20,
        FieldModification = 21,
        ExceptionCatch = 30,
        MethodEntry = 40,
        MethodExit = 41,
        MethodExitWithReturnValue = 42,
        MonitorContendedEnter = 43,
        MonitorContendedEntered = 44,
        MonitorWait = 45,
        MonitorWaited = 46,
        /// Also called `VM_INIT`.
        VmStart = 90,
        VmDeath = 99,
        /// Never sent across JDWP.
        VmDisconnected = 100,
    }
}

wire_enum! {
    /// JDWP `SuspendPolicy`: which threads the JVM suspends when it sends an
    /// event.
    pub enum SuspendPolicy: u8 {
        /// Suspend no threads.
        None = 0,
        /// Suspend the thread the event happened in.
        EventThread = 1,
        /// Suspend every thread.
        All = 2,
    }
}

wire_enum! {
    /// JDWP `StepSize`.
    pub enum StepSize: i32 {
        /// Step by the smallest possible amount (often a bytecode).
        Min = 0,
        /// Step to the next source line, or like `Min` without line numbers.
        Line = 1,
    }
}

wire_enum! {
    /// JDWP `StepDepth`.
    pub enum StepDepth: i32 {
        /// Step into any method calls.
        Into = 0,
        /// Step over any method calls.
        Over = 1,
        /// Step out of the current method.
        Out = 2,
    }
}

wire_enum! {
    /// JDWP `ThreadStatus`, from `ThreadReference.Status`.
    pub enum ThreadStatus: i32 {
        /// Finished (or not yet started).
        Zombie = 0,
        Running = 1,
        /// In `Thread.sleep`.
        Sleeping = 2,
        /// Blocked on a monitor.
        Monitor = 3,
        /// In `Object.wait`.
        Wait = 4,
        /// Not in the specification's table: HotSpot reports -1 for a
        /// thread that has not started yet.
        NotStarted = -1,
    }
}

wire_flags! {
    /// JDWP `SuspendStatus` bits, from `ThreadReference.Status`.
    pub struct SuspendStatus {
        const SUSPEND_STATUS_SUSPENDED = 0x01;
    }
}

wire_flags! {
    /// JDWP `ClassStatus` bits.
    pub struct ClassStatus {
        const VERIFIED = 0x01;
        const PREPARED = 0x02;
        const INITIALIZED = 0x04;
        const ERROR = 0x08;
    }
}

wire_flags! {
    /// JDWP `InvokeOptions` bits for the `InvokeMethod` and `NewInstance`
    /// commands.
    pub struct InvokeOptions {
        /// Resume only the invoking thread, not all threads, for the call.
        const INVOKE_SINGLE_THREADED = 0x01;
        /// Call the given method, not an override (ObjectReference only).
        const INVOKE_NONVIRTUAL = 0x02;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Gen, entropy, id_sizes, round_trip};
    use crate::wire::DecodeError;
    use proptest::prelude::*;

    #[test]
    fn spec_numbers() {
        assert_eq!(EventKind::SingleStep.raw(), 1);
        assert_eq!(EventKind::Breakpoint.raw(), 2);
        assert_eq!(EventKind::MethodExitWithReturnValue.raw(), 42);
        assert_eq!(EventKind::VmStart.raw(), 90);
        assert_eq!(EventKind::VmDeath.raw(), 99);
        assert_eq!(SuspendPolicy::All.raw(), 2);
        assert_eq!(StepDepth::Out.raw(), 2);
        assert_eq!(ThreadStatus::Wait.raw(), 4);
        assert_eq!(InvokeOptions::INVOKE_NONVIRTUAL.0, 2);
        assert!((ClassStatus::VERIFIED | ClassStatus::PREPARED).contains(ClassStatus::PREPARED));
        assert!(matches!(
            EventKind::from_raw(11),
            Err(DecodeError::Unknown { value: 11, .. })
        ));
        assert_eq!(ThreadStatus::from_raw(-1), Ok(ThreadStatus::NotStarted));
        assert!(ThreadStatus::from_raw(5).is_err());
    }

    proptest! {
        #[test]
        fn constants_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            round_trip::<EventKind>(&mut g)?;
            round_trip::<SuspendPolicy>(&mut g)?;
            round_trip::<StepSize>(&mut g)?;
            round_trip::<StepDepth>(&mut g)?;
            round_trip::<ThreadStatus>(&mut g)?;
            round_trip::<SuspendStatus>(&mut g)?;
            round_trip::<ClassStatus>(&mut g)?;
            round_trip::<InvokeOptions>(&mut g)?;
        }
    }
}
