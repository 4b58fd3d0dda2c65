//! What arming, re-arming or clearing a stop point tells its owner, as
//! plain data; the MCP layer words each note.

/// Something arming, re-arming or clearing a stop point wants its owner
/// to know; the MCP layer words it.
#[derive(Debug, Clone, PartialEq)]
pub enum ArmNote {
    /// A probe in the class's bytecode serves it; redefining the class
    /// paused its threads this long.
    ProbeArmed {
        pause_us: u64,
        /// A suspending stop point: passing hits stop in the probe's trap.
        suspends: bool,
    },
    /// The overhead guard would have paused it on the wire; a probe took
    /// it over instead (its redefinition paused the JVM this long).
    SwitchedByGuard {
        pause_us: u64,
    },
    /// `engine: "auto"` chose the wire: why no probe could go.
    WireChosen {
        why: String,
    },
    /// Over the wire, HotSpot runs every thread interpreted while this
    /// kind of stop point is armed.
    RunsInterpreted,
    /// The class is not loaded yet: the stop point arms when it loads.
    Deferred {
        class: String,
    },
    /// No loaded class has a name like the one waited for.
    NoSimilarClass,
    /// Loaded classes with a name like the one waited for.
    SimilarLoaded {
        names: Vec<String>,
    },
    /// One classloader copy of the class refused the stop point.
    CopyRefused {
        class: String,
        why: String,
    },
    /// The JVM refused the requests of one copy.
    CopyNotArmed {
        why: String,
    },
    /// A copy that loaded later could not be armed.
    LateCopyNotArmed {
        why: String,
    },
    /// A copy that loaded later refused the stop point.
    LateCopyRefused {
        why: String,
    },
    /// The JVM cannot report return values (JDWP < 1.6): exits only.
    NoReturnValues,
    /// One member of a family could not be re-armed.
    MemberNotArmed {
        member: String,
        why: String,
    },
    /// The family is full, so its class-load watch stays parked.
    FamilyFull,
    AlreadyArmed,
    AlreadyDisabled,
    /// No loaded class matches a family yet; it watches for later ones.
    NoMatchYet {
        glob: String,
        method: String,
    },
    /// The JVM refused a family's class-load watch.
    WatchRefused {
        why: String,
    },
    /// A family slot freed: its watch for new classes is back.
    SlotFreed {
        family: String,
    },
    /// It was spent: the JVM had already deleted its request.
    WasSpent,
    /// A probe's class changed since the probe went in (a reload, another
    /// tool): taking the probe out left the class as it runs now.
    LeftAlone {
        class: String,
    },
    /// It is disabled: a new definition applies when it is re-armed.
    AppliesWhenReArmed,
    /// This suspending stop point shares locations with a trace, whose
    /// hits now suspend the whole VM too (one policy per composite).
    SuspendsTrace {
        trace: String,
        suspender: String,
    },
    /// A suspending stop point at the same location makes this trace's
    /// hits suspend the VM too.
    SuspendedBy {
        suspender: String,
    },
}
