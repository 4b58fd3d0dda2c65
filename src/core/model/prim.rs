//! A Java primitive value: the one list of the eight primitive kinds. The
//! evaluator computes with it (`expr::eval::Val::Prim`), a reading shows it
//! (`shown::Scalar::Prim`), and it crosses to and from the wire's tagged
//! value here. It holds no words: the MCP layer prints it.

use crate::jdwp::Value;

/// A value of one of Java's eight primitive types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prim {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Char(u16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
}

impl Prim {
    /// The Java keyword of its type (`int`, `boolean`, …).
    pub fn kind(self) -> &'static str {
        match self {
            Prim::Bool(_) => "boolean",
            Prim::Byte(_) => "byte",
            Prim::Short(_) => "short",
            Prim::Char(_) => "char",
            Prim::Int(_) => "int",
            Prim::Long(_) => "long",
            Prim::Float(_) => "float",
            Prim::Double(_) => "double",
        }
    }

    /// The primitive a JDWP value carries; `None` for void and references.
    pub fn from_wire(value: &Value) -> Option<Prim> {
        Some(match *value {
            Value::Boolean(v) => Prim::Bool(v),
            Value::Byte(v) => Prim::Byte(v),
            Value::Short(v) => Prim::Short(v),
            Value::Char(v) => Prim::Char(v),
            Value::Int(v) => Prim::Int(v),
            Value::Long(v) => Prim::Long(v),
            Value::Float(v) => Prim::Float(v),
            Value::Double(v) => Prim::Double(v),
            Value::Void | Value::Object { .. } => return None,
        })
    }
}

impl From<Prim> for Value {
    fn from(p: Prim) -> Value {
        match p {
            Prim::Bool(v) => Value::Boolean(v),
            Prim::Byte(v) => Value::Byte(v),
            Prim::Short(v) => Value::Short(v),
            Prim::Char(v) => Value::Char(v),
            Prim::Int(v) => Value::Int(v),
            Prim::Long(v) => Value::Long(v),
            Prim::Float(v) => Value::Float(v),
            Prim::Double(v) => Value::Double(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_crosses_the_wire_and_back() {
        let all = [
            Prim::Bool(true),
            Prim::Byte(-1),
            Prim::Short(-2),
            Prim::Char(0x41),
            Prim::Int(3),
            Prim::Long(-4),
            Prim::Float(1.5),
            Prim::Double(-2.5),
        ];
        for p in all {
            assert_eq!(Prim::from_wire(&Value::from(p)), Some(p), "{}", p.kind());
        }
        assert_eq!(Prim::from_wire(&Value::Void), None);
    }
}
