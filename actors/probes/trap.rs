//! A suspending probe: its helper calls an empty `trap()` method after a
//! hit whose condition passed in the JVM, and the stop point's one JDWP
//! request is a breakpoint there. So only passing hits reach the wire, and
//! the probed method itself carries no breakpoint (a method with one is
//! never compiled): the hot path stays compiled, whatever the condition.
//! Event dispatch steps the hit thread back out into the probed method
//! before it reports the hit (`events/dispatch/land.rs`).

use super::ProbesHandle;
use crate::classfile::probe::{TRAP, field};
use crate::door::Jvm;
use crate::error::ArmError;
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::{FieldValue, Location, TypeTag, Value};
use crate::model::stop_point::Mode;

/// Makes a probe-served stop point's trap match its probe: a breakpoint
/// in the live helper's trap (and the helper's calls to it switched on)
/// for a suspending stop point, none otherwise.
pub async fn sync_trap(session: &Jvm, probes: &ProbesHandle, id: &str) -> Result<(), ArmError> {
    let helper = probes
        .point(id)
        .await
        .filter(|p| matches!(p.spec.mode, Mode::Suspend))
        .and_then(|p| p.live.map(|l| l.helper));
    let Some(helper) = helper else {
        return session.stop_points().trap(id, None).await;
    };
    let classes = session.classes();
    let methods = classes.methods(helper).await?;
    let trap = methods
        .iter()
        .find(|m| m.name == TRAP && m.signature == "()V")
        .ok_or(ArmError::Internal("the probe's helper has no trap method"))?;
    let at = Location {
        type_tag: TypeTag::Class,
        class: helper,
        method: trap.id,
        index: 0,
    };
    session.stop_points().trap(id, Some(at)).await?;
    let fields = classes.fields(helper).await?;
    let suspend = fields
        .iter()
        .find(|f| f.name == field::SUSPEND)
        .ok_or(ArmError::Internal(
            "the probe's helper has no suspend switch",
        ))?;
    session
        .connection()
        .send(&SetStatics {
            class: helper,
            values: vec![FieldValue {
                field: suspend.id,
                value: Value::Boolean(true),
            }],
        })
        .await?;
    Ok(())
}
