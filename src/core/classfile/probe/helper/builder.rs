//! The helper class under construction: its constant pool, fields and
//! methods, with the few shorthands every generated method uses.

use ristretto_classfile::attributes::{Attribute, Instruction};
use ristretto_classfile::{
    ConstantPool, Field, FieldAccessFlags, FieldType, Method, MethodAccessFlags,
};

use crate::classfile::probe::Refusal;
use crate::classfile::probe::asm::Asm;

type I = Instruction;

pub const AL: &str = "java/util/concurrent/atomic/AtomicLong";
pub const ALA: &str = "java/util/concurrent/atomic/AtomicLongArray";

pub struct Gen {
    pub cp: ConstantPool<'static>,
    pub this: u16,
    pub name: String,
    pub fields: Vec<Field>,
    pub methods: Vec<Method>,
}

pub fn cpe<T>(r: ristretto_classfile::Result<T>) -> Result<T, Refusal> {
    r.map_err(|e| Refusal::Unsupported(e.to_string()))
}

impl Gen {
    pub fn field(&mut self, name: &str, descriptor: &str, volatile: bool) -> Result<(), Refusal> {
        let mut flags = FieldAccessFlags::PUBLIC | FieldAccessFlags::STATIC;
        if volatile {
            flags |= FieldAccessFlags::VOLATILE;
        }
        let f = Field {
            access_flags: flags,
            name_index: cpe(self.cp.add_utf8(name))?,
            descriptor_index: cpe(self.cp.add_utf8(descriptor))?,
            field_type: cpe(FieldType::parse(descriptor))?,
            attributes: Vec::new(),
        };
        self.fields.push(f);
        Ok(())
    }

    pub fn own(&mut self, name: &str, descriptor: &str) -> Result<u16, Refusal> {
        cpe(self.cp.add_field_ref(self.this, name, descriptor))
    }

    pub fn mref(&mut self, owner: &str, name: &str, descriptor: &str) -> Result<u16, Refusal> {
        let c = cpe(self.cp.add_class(owner))?;
        cpe(self.cp.add_method_ref(c, name, descriptor))
    }

    pub fn own_method(&mut self, name: &str, descriptor: &str) -> Result<u16, Refusal> {
        cpe(self.cp.add_method_ref(self.this, name, descriptor))
    }

    pub fn int(&mut self, asm: &mut Asm, v: i32) -> Result<(), Refusal> {
        if let Ok(b) = i8::try_from(v) {
            asm.op(I::Bipush(b));
        } else if let Ok(s) = i16::try_from(v) {
            asm.op(I::Sipush(s));
        } else {
            let i = cpe(self.cp.add_integer(v))?;
            asm.op(I::Ldc_w(i));
        }
        Ok(())
    }

    pub fn long(&mut self, asm: &mut Asm, v: i64) -> Result<(), Refusal> {
        let i = self.long_const(v)?;
        asm.op(I::Ldc2_w(i));
        Ok(())
    }

    /// A long constant's pool index, for an `ldc2_w` written later.
    pub fn long_const(&mut self, v: i64) -> Result<u16, Refusal> {
        cpe(self.cp.add_long(v))
    }

    pub fn method(
        &mut self,
        name: &str,
        descriptor: &str,
        flags: MethodAccessFlags,
        asm: Asm,
        max_stack: u16,
        max_locals: u16,
    ) -> Result<(), Refusal> {
        let (code, exception_table) = asm
            .finish()
            .ok_or(Refusal::Unsupported("an unbound label".into()))?;
        let code_name = cpe(self.cp.add_utf8("Code"))?;
        self.methods.push(Method {
            access_flags: flags,
            name_index: cpe(self.cp.add_utf8(name))?,
            descriptor_index: cpe(self.cp.add_utf8(descriptor))?,
            attributes: vec![Attribute::Code {
                name_index: code_name,
                max_stack,
                max_locals,
                code,
                exception_table,
                attributes: Vec::new(),
            }],
        });
        Ok(())
    }
}
