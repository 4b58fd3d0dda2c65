//! The loaded side of the code tools: which copy of a class a selector
//! names (`Name` or `Name@0x<loader>`), and the type's shape as the JVM
//! describes it — modifiers, hierarchy, fields, methods, per-method line
//! tables and, when asked, code bytes — read in pipelined bursts.

use futures::future::join_all;

use crate::door::Jvm;
use crate::error::{CodeError, JdwpError, SessionError};
use crate::jdwp::method::Bytecodes;
use crate::jdwp::reference_type::{ConstantPool, Interfaces, Modifiers};
use crate::jdwp::{ErrorCode, ReferenceTypeId, TypeTag};
use crate::model::classfile::ClassShape;
use crate::model::stale::{self, Comparison, LoadedField, LoadedMethod, LoadedShape};

use super::Pinned;

/// Splits `com.acme.Foo@0x7f3a` into the name and the loader id.
pub fn parse_selector(selector: &str) -> Result<(String, Option<u64>), CodeError> {
    let selector = selector.trim();
    match selector.rsplit_once('@') {
        None => Ok((selector.to_string(), None)),
        Some((name, loader)) => {
            let hex = loader
                .strip_prefix("0x")
                .or_else(|| loader.strip_prefix("0X"))
                .unwrap_or(loader);
            u64::from_str_radix(hex, 16)
                .map(|l| (name.trim().to_string(), Some(l)))
                .map_err(|_| CodeError::BadSelector {
                    selector: selector.to_string(),
                })
        }
    }
}

/// The copy `selector` names: the first loaded copy, or the one its
/// loader suffix pins; the loaders of the other copies are kept to name.
pub async fn pin(session: &Jvm, selector: &str) -> Result<Pinned, SessionError> {
    let (name, loader) = parse_selector(selector)?;
    let classes = session.classes();
    let copies: Vec<_> = classes
        .by_name(&name)
        .await
        .map_err(|e| session.map_err(e))?
        .into_iter()
        .filter(|c| c.tag != TypeTag::Array)
        .collect();
    if copies.is_empty() {
        return Err(CodeError::NotLoaded { class: name }.into());
    }
    let loaders: Vec<u64> = join_all(copies.iter().map(|c| classes.loader(c.id)))
        .await
        .into_iter()
        .map(|l| l.map(|l| l.0))
        .collect::<Result<_, _>>()
        .map_err(|e| session.map_err(e))?;
    let at =
        match loader {
            None => 0,
            Some(want) => loaders.iter().position(|l| *l == want).ok_or_else(|| {
                CodeError::NoCopyForLoader {
                    class: name.clone(),
                    loader: want,
                    loaders: loaders.clone(),
                }
            })?,
        };
    Ok(Pinned {
        name,
        type_id: copies[at].id.0,
        loader: loaders[at],
        others: loaders
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, l)| *l)
            .collect(),
    })
}

/// The type's shape as the JVM describes it; code bytes only when asked.
pub async fn shape(
    session: &Jvm,
    pinned: &Pinned,
    bytecode: bool,
) -> Result<LoadedShape, JdwpError> {
    let id = ReferenceTypeId(pinned.type_id);
    let classes = session.classes();
    let conn = session.connection();
    let (modifiers, fields, methods, superclass, interfaces) = futures::join!(
        conn.send(&Modifiers { ref_type: id }),
        classes.fields(id),
        classes.methods(id),
        classes.superclass(id),
        conn.send(&Interfaces { ref_type: id }),
    );
    let (methods, interfaces) = (methods?, interfaces?);
    let super_name = match superclass? {
        Some(s) => Some(classes.info(s).await?.name.clone()),
        None => None,
    };
    let interface_names = join_all(interfaces.iter().map(|i| classes.info(*i))).await;
    let read = join_all(methods.iter().map(|m| async move {
        let lines = classes.lines(id, m.id).await?;
        let code = if bytecode && !m.is_native() && !m.is_abstract() {
            match conn
                .send(&Bytecodes {
                    ref_type: id,
                    method: m.id,
                })
                .await
            {
                Ok(b) => Some(b),
                Err(e) if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) => None,
                Err(e) => return Err(e),
            }
        } else {
            None
        };
        Ok::<_, JdwpError>(LoadedMethod {
            name: m.name.clone(),
            signature: m.signature.clone(),
            modifiers: m.modifiers,
            lines: (!lines.entries.is_empty())
                .then(|| lines.entries.iter().map(|(_, l)| *l).collect()),
            code,
        })
    }))
    .await;
    Ok(LoadedShape {
        name: pinned.name.clone(),
        modifiers: modifiers?,
        super_name,
        interfaces: interface_names
            .into_iter()
            .map(|i| i.map(|i| i.name.clone()))
            .collect::<Result<_, _>>()?,
        fields: fields?
            .iter()
            .map(|f| LoadedField {
                name: f.name.clone(),
                signature: f.signature.clone(),
                modifiers: f.modifiers,
            })
            .collect(),
        methods: read.into_iter().collect::<Result<_, _>>()?,
        pool: None,
    })
}

/// The loaded type set against `built`. Where code bytes differ, the
/// class's constant pool is read (one packet) and the code compared by
/// what its constants name: a class this or another tool redefined keeps
/// a merged pool, so the very file it came from differs byte for byte.
pub async fn compare(
    session: &Jvm,
    pinned: &Pinned,
    built: &ClassShape,
    bytecode: bool,
) -> Result<Comparison, JdwpError> {
    let mut running = shape(session, pinned, bytecode).await?;
    let comparison = stale::compare(&running, built);
    if comparison.code_differs().next().is_none() {
        return Ok(comparison);
    }
    let pool = session
        .connection()
        .send(&ConstantPool {
            ref_type: ReferenceTypeId(pinned.type_id),
        })
        .await;
    match pool {
        Ok(p) => {
            running.pool = stale::pool_text_of_jdwp(p.count, &p.bytes);
            Ok(stale::compare(&running, built))
        }
        // A JVM without the capability: the bytes are all there is.
        Err(e) if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) => Ok(comparison),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_pin_a_loader_or_not() {
        assert_eq!(
            parse_selector("com.acme.Foo").ok(),
            Some(("com.acme.Foo".to_string(), None))
        );
        assert_eq!(
            parse_selector("com.acme.Foo@0x7f3a").ok(),
            Some(("com.acme.Foo".to_string(), Some(0x7f3a)))
        );
        assert!(parse_selector("Foo@zz").is_err());
    }
}
