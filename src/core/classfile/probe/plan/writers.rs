//! A field's writers as a write probe sees them: whether code outside the
//! class may write the field (then a probe in the class alone would miss
//! those writes), and whether the helper may read a static's old value
//! itself, for a record only.

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::Attribute;

use super::super::read::{this_name, utf8};
use super::super::{ProbeSpec, Refusal, Site, cond};
use super::OLD_VALUE;

/// Refused when code outside `class` may write its field `field`, which a
/// write probe in `class` alone would miss: a field that is not private
/// (other classes of its package, subclasses, anyone), or a private one
/// in a nest (JDK 11+: its nestmates write it directly, not through an
/// accessor in `class`).
pub fn other_writers(class: &[u8], field: &str) -> Result<(), Refusal> {
    let c = super::super::parse(class)?;
    let refuse = |why: String| Refusal::OtherWriters {
        class: this_name(&c).replace('/', "."),
        field: field.to_string(),
        why,
    };
    let Some(f) = c.fields.iter().find(|f| utf8(&c, f.name_index) == field) else {
        return Err(Refusal::NoField {
            owner: this_name(&c).replace('/', "."),
            name: field.to_string(),
        });
    };
    if !f
        .access_flags
        .contains(ristretto_classfile::FieldAccessFlags::PRIVATE)
    {
        return Err(refuse(
            "is not private, so other classes may write it".into(),
        ));
    }
    let class_name = |i: u16| match c.constant_pool.get(i) {
        Some(ristretto_classfile::Constant::Class(n)) => utf8(&c, *n).replace('/', "."),
        _ => "?".into(),
    };
    let mut nest = Vec::new();
    for a in &c.attributes {
        match a {
            Attribute::NestMembers { class_indexes, .. } => {
                nest.extend(class_indexes.iter().map(|i| class_name(*i)));
            }
            Attribute::NestHost {
                host_class_index, ..
            } => nest.push(class_name(*host_class_index)),
            _ => {}
        }
    }
    if nest.is_empty() {
        return Ok(());
    }
    Err(refuse(format!(
        "is private, but its nestmates ({}) may write it directly",
        nest.join(", ")
    )))
}

/// The static field a one-class write probe's helper may read itself for
/// its old value (see [`super::Plan::old_static`]).
pub(super) fn old_static(
    class: &ClassFile<'_>,
    spec: &ProbeSpec,
) -> Option<(String, String, String)> {
    use ristretto_classfile::FieldAccessFlags;
    let Site::FieldWrite {
        owner,
        name,
        descriptor,
        writers,
    } = &spec.site
    else {
        return None;
    };
    let reads_old = spec
        .condition
        .as_ref()
        .is_some_and(|c| cond::names(c).iter().any(|(n, _)| n == OLD_VALUE));
    // A path from the old value reads it from the column the site fills.
    let reads_old = reads_old || crate::classfile::probe::paths::named(spec, OLD_VALUE);
    if !writers.is_empty() || reads_old || *owner != this_name(class) {
        return None;
    }
    class
        .fields
        .iter()
        .find(|f| {
            utf8(class, f.name_index) == *name && utf8(class, f.descriptor_index) == *descriptor
        })
        .filter(|f| {
            f.access_flags.contains(FieldAccessFlags::STATIC)
                && !f.access_flags.contains(FieldAccessFlags::PRIVATE)
        })
        .map(|_| (owner.clone(), name.clone(), descriptor.clone()))
}
