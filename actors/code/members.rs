//! What a loaded class declares and what lives of it: its methods and
//! fields (with generic signatures, and parameter names from the variable
//! table), optionally those it inherits (superclasses and interfaces, each
//! with its origin), chosen among class-loader copies; and the live
//! instances of several classes counted in one heap walk. Everything comes
//! from JDWP, which answers for the class the JVM actually loaded.

use std::time::{Duration, Instant};

use futures::future::join_all;

use crate::door::Jvm;
use crate::error::{JdwpError, SessionError};
use crate::jdwp::reference_type::{
    Instances as InstancesCmd, Interfaces, Modifiers, SignatureWithGeneric,
};
use crate::jdwp::virtual_machine::InstanceCounts;
use crate::jdwp::{ReferenceTypeId, TypeTag};
use crate::jvm::classes::{ClassInfo, Variables};

/// Methods or fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberSet {
    Methods,
    Fields,
}

/// One method or field as the JVM declares it.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    /// JNI signature.
    pub signature: String,
    /// Generic signature, empty when the class file has none.
    pub generic: String,
    pub modifiers: i32,
    /// A method's parameter names, when the class has a variable table.
    pub param_names: Option<Vec<String>>,
}

/// The members one type declares.
#[derive(Debug, Clone)]
pub struct TypeMembers {
    /// Dotted name.
    pub name: String,
    pub interface: bool,
    /// The type's own generic signature, empty when none.
    pub generic: String,
    pub modifiers: i32,
    pub members: Vec<Member>,
}

/// A class's members, and which copy was read.
#[derive(Debug, Clone)]
pub struct Members {
    pub class: String,
    /// The defining loader of the copy read (0 = the bootstrap loader).
    pub loader: u64,
    /// The defining loader of every loaded copy, in the JVM's order.
    pub loaders: Vec<u64>,
    /// The class first, then (when asked) superclasses nearest first, then
    /// interfaces.
    pub types: Vec<TypeMembers>,
}

/// Live instances of one loaded class copy.
#[derive(Debug, Clone)]
pub struct InstanceRow {
    pub class: String,
    pub loader: u64,
    /// Instances of exactly this type (subclasses are not counted).
    pub count: i64,
    /// At most the asked number of handles.
    pub handles: Vec<u64>,
}

/// The answer to an instance query.
#[derive(Debug, Clone)]
pub struct InstanceReport {
    pub rows: Vec<InstanceRow>,
    /// Names no loaded class has.
    pub not_loaded: Vec<String>,
    /// Wall time of the counting round trip (one heap walk for all).
    pub count_time: Duration,
    /// Wall time of the handle round trips (one walk each).
    pub handle_time: Duration,
    /// Heap walks caused: one for the counts, one per class asked for handles.
    pub walks: usize,
}

/// Most types an inherited listing walks.
const MAX_TYPES: usize = 32;
/// Most methods whose variable table is read for parameter names.
const MAX_NAMED: usize = 400;

/// `com.acme.Foo@0x7f3a` → (`com.acme.Foo`, Some(0x7f3a)).
fn split_selector(selector: &str) -> (&str, Option<u64>) {
    match selector.rsplit_once('@') {
        Some((name, loader)) => {
            let hex = loader.trim_start_matches("0x").trim_start_matches("0X");
            match u64::from_str_radix(hex, 16) {
                Ok(l) => (name, Some(l)),
                Err(_) => (selector, None),
            }
        }
        None => (selector, None),
    }
}

impl Jvm {
    /// The methods or fields of a loaded class (a `Name@0x<loader>`
    /// selector pins one class-loader copy), with the inherited ones when
    /// `inherited`.
    pub async fn members(
        &self,
        selector: &str,
        set: MemberSet,
        inherited: bool,
    ) -> Result<Members, SessionError> {
        self.check_alive()?;
        let (name, pinned) = split_selector(selector.trim());
        let copies = self
            .classes()
            .by_name(name)
            .await
            .map_err(|e| self.map_err(e))?;
        if copies.is_empty() {
            return Err(SessionError::ClassNotLoaded {
                class: name.to_string(),
            });
        }
        let loaders = join_all(copies.iter().map(|c| self.classes().loader(c.id))).await;
        let loaders: Vec<u64> = loaders
            .into_iter()
            .map(|l| l.map(|l| l.0).unwrap_or(0))
            .collect();
        let pick =
            match pinned {
                None => 0,
                Some(l) => loaders.iter().position(|x| *x == l).ok_or_else(|| {
                    SessionError::NoSuchCopy {
                        class: name.to_string(),
                        loader: l,
                        loaders: loaders.clone(),
                    }
                })?,
            };
        let first = copies[pick].id;
        let ids = if inherited {
            self.supertypes(first).await.map_err(|e| self.map_err(e))?
        } else {
            vec![first]
        };
        let types = join_all(ids.iter().map(|&id| self.type_members(id, set))).await;
        let types = types
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.map_err(e))?;
        Ok(Members {
            class: name.to_string(),
            loader: loaders[pick],
            loaders,
            types,
        })
    }

    /// The type, its superclasses nearest first, then every interface it
    /// or they implement (each once).
    async fn supertypes(&self, id: ReferenceTypeId) -> Result<Vec<ReferenceTypeId>, JdwpError> {
        let mut out = self.classes().hierarchy(id).await?;
        let mut queue: Vec<ReferenceTypeId> = out.clone();
        let mut i = 0;
        while i < queue.len() && out.len() < MAX_TYPES {
            let direct = self
                .connection()
                .send(&Interfaces { ref_type: queue[i] })
                .await?;
            for iface in direct {
                if !out.contains(&iface) {
                    out.push(iface);
                    queue.push(iface);
                }
            }
            i += 1;
        }
        out.truncate(MAX_TYPES);
        Ok(out)
    }

    /// What one type declares, read in one burst.
    async fn type_members(
        &self,
        id: ReferenceTypeId,
        set: MemberSet,
    ) -> Result<TypeMembers, JdwpError> {
        let classes = self.classes();
        // The class's own generic signature is asked for here: a class the
        // cache met by name was cached without one.
        let (info, modifiers, sig) = futures::join!(
            classes.info(id),
            self.connection().send(&Modifiers { ref_type: id }),
            self.connection()
                .send(&SignatureWithGeneric { ref_type: id })
        );
        let info: std::sync::Arc<ClassInfo> = info?;
        let modifiers = modifiers?;
        let generic = sig.map(|s| s.generic_signature).unwrap_or_default();
        let members = match set {
            MemberSet::Fields => classes
                .fields(id)
                .await?
                .iter()
                .map(|f| Member {
                    name: f.name.clone(),
                    signature: f.signature.clone(),
                    generic: f.generic.clone(),
                    modifiers: f.modifiers,
                    param_names: None,
                })
                .collect(),
            MemberSet::Methods => {
                let methods = classes.methods(id).await?;
                let names = join_all(methods.iter().take(MAX_NAMED).map(|m| async move {
                    match classes.variables(id, m.id).await {
                        Ok(v) => param_names(&v, m.is_static()),
                        Err(_) => None,
                    }
                }))
                .await;
                methods
                    .iter()
                    .enumerate()
                    .map(|(i, m)| Member {
                        name: m.name.clone(),
                        signature: m.signature.clone(),
                        generic: m.generic.clone(),
                        modifiers: m.modifiers,
                        param_names: names.get(i).cloned().flatten(),
                    })
                    .collect()
            }
        };
        Ok(TypeMembers {
            name: info.name.clone(),
            interface: modifiers & 0x200 != 0 || info.tag == TypeTag::Interface,
            generic,
            modifiers,
            members,
        })
    }

    /// Counts the live instances of every loaded copy of `names` in one
    /// `VirtualMachine.InstanceCounts` (one heap walk), then reads up to
    /// `max_handles` handles of each copy that has any.
    pub async fn instances(
        &self,
        names: &[String],
        max_handles: usize,
    ) -> Result<InstanceReport, SessionError> {
        self.check_alive()?;
        self.require_instance_info().await?;
        let found = join_all(names.iter().map(|n| self.classes().by_name(n.trim()))).await;
        let mut copies: Vec<(String, ReferenceTypeId)> = Vec::new();
        let mut not_loaded = Vec::new();
        for (name, f) in names.iter().zip(found) {
            let f = f.map_err(|e| self.map_err(e))?;
            if f.is_empty() {
                not_loaded.push(name.trim().to_string());
            }
            copies.extend(f.iter().map(|c| (c.name.clone(), c.id)));
        }
        let loaders = join_all(copies.iter().map(|(_, id)| self.classes().loader(*id))).await;
        let _walking = self.link().life.heap_walk();
        let started = Instant::now();
        let counts = if copies.is_empty() {
            Vec::new()
        } else {
            self.connection()
                .send(&InstanceCounts {
                    ref_types: copies.iter().map(|(_, id)| *id).collect(),
                })
                .await
                .map_err(|e| self.map_err(e))?
        };
        let count_time = started.elapsed();
        let wanted: Vec<usize> = (0..copies.len())
            .filter(|&i| max_handles > 0 && counts.get(i).is_some_and(|c| *c > 0))
            .collect();
        let started = Instant::now();
        let handles = join_all(wanted.iter().map(|&i| {
            self.connection().send(&InstancesCmd {
                ref_type: copies[i].1,
                max_instances: i32::try_from(max_handles).unwrap_or(i32::MAX),
            })
        }))
        .await;
        let handle_time = started.elapsed();
        let mut rows: Vec<InstanceRow> = copies
            .iter()
            .zip(loaders)
            .enumerate()
            .map(|(i, ((class, _), loader))| InstanceRow {
                class: class.clone(),
                loader: loader.map(|l| l.0).unwrap_or(0),
                count: counts.get(i).copied().unwrap_or(0),
                handles: Vec::new(),
            })
            .collect();
        for (&i, h) in wanted.iter().zip(handles) {
            let h = h.map_err(|e| self.map_err(e))?;
            rows[i].handles = h.into_iter().map(|o| o.id.0).collect();
        }
        Ok(InstanceReport {
            rows,
            not_loaded,
            count_time,
            handle_time,
            walks: usize::from(!copies.is_empty()) + wanted.len(),
        })
    }
}

/// A method's parameter names from its variable table: the slots below
/// the argument size, in slot order, without `this`.
fn param_names(vars: &Variables, is_static: bool) -> Option<Vec<String>> {
    let Variables::Known { arg_count, vars } = vars else {
        return None;
    };
    let mut params: Vec<_> = vars
        .iter()
        .filter(|v| v.slot < *arg_count && v.start == 0)
        .collect();
    params.sort_by_key(|v| v.slot);
    params.dedup_by_key(|v| v.slot);
    let skip = usize::from(!is_static && params.first().is_some_and(|v| v.slot == 0));
    Some(
        params
            .into_iter()
            .skip(skip)
            .map(|v| v.name.clone())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_pin_a_loader() {
        assert_eq!(
            split_selector("com.acme.Foo@0x7f3a"),
            ("com.acme.Foo", Some(0x7f3a))
        );
        assert_eq!(split_selector("com.acme.Foo"), ("com.acme.Foo", None));
        assert_eq!(split_selector("odd@name"), ("odd@name", None));
    }
}
