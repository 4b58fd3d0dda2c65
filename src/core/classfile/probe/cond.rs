//! A condition compiled to JVM bytecode, for the helper's record method:
//! locals, arguments, fields of the probed class (read at the site),
//! the value an event binds, literals, arithmetic, comparisons, `&&`,
//! `||`, `!`, `== null`, and `==`/`!=` on strings by content (as the
//! expression language defines them). Whatever else the language offers
//! (method calls, chains into other objects, indexing) is refused with the
//! column, so the stop point can go over the wire instead.

use ristretto_classfile::ConstantPool;
use ristretto_classfile::attributes::Instruction;

use super::asm::{Asm, Label};
use super::plan::Plan;
use super::{Kind, Refusal};
use crate::expr::{BinaryOp, Expr, ExprKind, Literal, Parsed, UnaryOp};

/// The names a condition reads (the first segment of each path), with the
/// 1-based column where each is written.
pub fn names(c: &Parsed) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    walk(&c.expr, &mut |e| match &e.kind {
        ExprKind::Path(ids) if ids.len() == 1 => {
            out.push((ids[0].name.clone(), ids[0].span.column(&c.source)))
        }
        ExprKind::Field { target, name } if matches!(target.kind, ExprKind::This) => {
            out.push((name.name.clone(), name.span.column(&c.source)))
        }
        _ => {}
    });
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { operand, .. } => walk(operand, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk(lhs, f);
            walk(rhs, f);
        }
        _ => {}
    }
}

/// Checks that `c` compiles against `plan`'s columns (no code written).
pub fn check(c: &Parsed, plan: &Plan) -> Result<(), Refusal> {
    let mut asm = Asm::default();
    let mut cp = ConstantPool::default();
    let env = Env::of(plan, 0);
    let fail = asm.label();
    compile(&mut asm, &mut cp, c, &env, fail)
}

/// Where each name lives in the record method's locals.
pub struct Env {
    vars: Vec<(String, u16, Kind, String)>,
}

impl Env {
    /// The columns of `plan` as the record method's parameters from `first`.
    pub fn of(plan: &Plan, first: u16) -> Env {
        let mut slot = first;
        let mut vars = Vec::new();
        for c in &plan.columns {
            vars.push((c.name.clone(), slot, c.kind, c.descriptor.clone()));
            slot += c.kind.slots();
        }
        Env { vars }
    }

    fn find(&self, name: &str) -> Option<&(String, u16, Kind, String)> {
        let alias = match name {
            "newValue" => self.vars.first().map(|v| v.0.as_str()),
            _ => None,
        };
        self.vars
            .iter()
            .find(|v| v.0 == name)
            .or_else(|| alias.and_then(|a| self.vars.iter().find(|v| v.0 == a)))
    }
}

/// Jumps to `fail` unless `c` holds.
pub fn compile(
    asm: &mut Asm,
    cp: &mut ConstantPool<'_>,
    c: &Parsed,
    env: &Env,
    fail: Label,
) -> Result<(), Refusal> {
    let mut g = Gen {
        asm,
        cp,
        env,
        src: &c.source,
    };
    g.cond(&c.expr, false, fail)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Int,
    Long,
    Float,
    Double,
    Bool,
    Ref { string: bool },
    Null,
}

impl Ty {
    fn numeric(self) -> bool {
        matches!(self, Ty::Int | Ty::Long | Ty::Float | Ty::Double)
    }
    fn rank(self) -> u8 {
        match self {
            Ty::Int => 0,
            Ty::Long => 1,
            Ty::Float => 2,
            _ => 3,
        }
    }
}

/// Both sides of a comparison and the types they would have.
struct Sides<'e> {
    lhs: &'e Expr,
    rhs: &'e Expr,
    lt: Ty,
    rt: Ty,
}

struct Gen<'a, 'b, 'c> {
    asm: &'a mut Asm,
    cp: &'a mut ConstantPool<'c>,
    env: &'b Env,
    src: &'b str,
}

fn err(e: &Expr, src: &str, why: impl Into<String>) -> Refusal {
    Refusal::Condition {
        column: e.span.column(src),
        why: why.into(),
    }
}

impl Gen<'_, '_, '_> {
    fn fail(&self, e: &Expr, why: impl Into<String>) -> Refusal {
        err(e, self.src, why)
    }

    /// Jumps to `to` when `e` is `when`.
    fn cond(&mut self, e: &Expr, when: bool, to: Label) -> Result<(), Refusal> {
        match &e.kind {
            ExprKind::Literal(Literal::Bool(b)) => {
                if *b == when {
                    self.asm.jump(Instruction::Goto, to);
                }
                Ok(())
            }
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand,
            } => self.cond(operand, !when, to),
            ExprKind::Binary { op, lhs, rhs } => match op {
                BinaryOp::And | BinaryOp::Or => {
                    let and = *op == BinaryOp::And;
                    if and != when {
                        // Either side decides alone.
                        self.cond(lhs, when, to)?;
                        self.cond(rhs, when, to)
                    } else {
                        let skip = self.asm.label();
                        self.cond(lhs, !when, skip)?;
                        self.cond(rhs, when, to)?;
                        self.asm.bind(skip);
                        Ok(())
                    }
                }
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => self.compare(e, *op, lhs, rhs, when, to),
                _ => Err(self.fail(e, "an arithmetic value is not a condition")),
            },
            _ => {
                let t = self.value(e)?;
                if t != Ty::Bool {
                    return Err(self.fail(e, "a condition must be true or false"));
                }
                self.asm.jump(
                    if when {
                        Instruction::Ifne
                    } else {
                        Instruction::Ifeq
                    },
                    to,
                );
                Ok(())
            }
        }
    }

    fn compare(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        when: bool,
        to: Label,
    ) -> Result<(), Refusal> {
        // Jump when the comparison is `when`: for false, the negation.
        let op = if when { op } else { negate(op) };
        let sides = Sides {
            lhs,
            rhs,
            lt: self.peek(lhs)?,
            rt: self.peek(rhs)?,
        };
        let refs = |t: Ty| matches!(t, Ty::Ref { .. } | Ty::Null);
        if refs(sides.lt) || refs(sides.rt) {
            return self.compare_refs(e, op, &sides, to);
        }
        if sides.lt == Ty::Bool || sides.rt == Ty::Bool {
            return self.compare_bools(e, op, &sides, to);
        }
        self.compare_numbers(op, &sides, when, to)
    }

    /// References: `== null`, strings by content, others by identity.
    fn compare_refs(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        s: &Sides<'_>,
        to: Label,
    ) -> Result<(), Refusal> {
        if !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            return Err(self.fail(e, "references compare only with == and !="));
        }
        let eq = op == BinaryOp::Eq;
        if s.lt == Ty::Null || s.rt == Ty::Null {
            let other = if s.lt == Ty::Null { s.rhs } else { s.lhs };
            self.value(other)?;
            self.asm.jump(
                if eq {
                    Instruction::Ifnull
                } else {
                    Instruction::Ifnonnull
                },
                to,
            );
            return Ok(());
        }
        let strings =
            matches!(s.lt, Ty::Ref { string: true }) || matches!(s.rt, Ty::Ref { string: true });
        self.value(s.lhs)?;
        self.value(s.rhs)?;
        if strings {
            let c = cpe(self.cp.add_class("java/util/Objects"))?;
            let m = cpe(self.cp.add_method_ref(
                c,
                "equals",
                "(Ljava/lang/Object;Ljava/lang/Object;)Z",
            ))?;
            self.asm.op(Instruction::Invokestatic(m));
            self.asm.jump(
                if eq {
                    Instruction::Ifne
                } else {
                    Instruction::Ifeq
                },
                to,
            );
        } else {
            self.asm.jump(
                if eq {
                    Instruction::If_acmpeq
                } else {
                    Instruction::If_acmpne
                },
                to,
            );
        }
        Ok(())
    }

    fn compare_bools(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        s: &Sides<'_>,
        to: Label,
    ) -> Result<(), Refusal> {
        if s.lt != s.rt || !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            return Err(self.fail(e, "booleans compare only with each other, by == and !="));
        }
        self.value(s.lhs)?;
        self.value(s.rhs)?;
        self.asm.jump(
            if op == BinaryOp::Eq {
                Instruction::If_icmpeq
            } else {
                Instruction::If_icmpne
            },
            to,
        );
        Ok(())
    }

    /// Numbers, both widened to the wider side's type. `op` is already
    /// negated when jumping on false (`when`).
    fn compare_numbers(
        &mut self,
        op: BinaryOp,
        s: &Sides<'_>,
        when: bool,
        to: Label,
    ) -> Result<(), Refusal> {
        let t = if s.lt.rank() >= s.rt.rank() {
            s.lt
        } else {
            s.rt
        };
        self.value(s.lhs)?;
        self.widen(s.lt, t);
        self.value(s.rhs)?;
        self.widen(s.rt, t);
        if t == Ty::Int {
            self.asm.jump(
                match op {
                    BinaryOp::Eq => Instruction::If_icmpeq,
                    BinaryOp::Ne => Instruction::If_icmpne,
                    BinaryOp::Lt => Instruction::If_icmplt,
                    BinaryOp::Le => Instruction::If_icmple,
                    BinaryOp::Gt => Instruction::If_icmpgt,
                    _ => Instruction::If_icmpge,
                },
                to,
            );
            return Ok(());
        }
        // An ordering with NaN is false: jumping on true, NaN must not
        // jump; jumping on false (`op` negated), it must. `*cmpg` gives
        // NaN as 1 (which `<`/`<=` do not take and `>`/`>=` do), `*cmpl`
        // as -1.
        let less = matches!(op, BinaryOp::Lt | BinaryOp::Le);
        let g = less == when;
        self.asm.op(match t {
            Ty::Long => Instruction::Lcmp,
            Ty::Float if g => Instruction::Fcmpg,
            Ty::Float => Instruction::Fcmpl,
            _ if g => Instruction::Dcmpg,
            _ => Instruction::Dcmpl,
        });
        self.asm.jump(
            match op {
                BinaryOp::Eq => Instruction::Ifeq,
                BinaryOp::Ne => Instruction::Ifne,
                BinaryOp::Lt => Instruction::Iflt,
                BinaryOp::Le => Instruction::Ifle,
                BinaryOp::Gt => Instruction::Ifgt,
                _ => Instruction::Ifge,
            },
            to,
        );
        Ok(())
    }

    fn widen(&mut self, from: Ty, to: Ty) {
        let op = match (from, to) {
            (Ty::Int, Ty::Long) => Some(Instruction::I2l),
            (Ty::Int, Ty::Float) => Some(Instruction::I2f),
            (Ty::Int, Ty::Double) => Some(Instruction::I2d),
            (Ty::Long, Ty::Float) => Some(Instruction::L2f),
            (Ty::Long, Ty::Double) => Some(Instruction::L2d),
            (Ty::Float, Ty::Double) => Some(Instruction::F2d),
            _ => None,
        };
        if let Some(op) = op {
            self.asm.op(op);
        }
    }

    /// The type `e` would have, without writing code.
    fn peek(&mut self, e: &Expr) -> Result<Ty, Refusal> {
        let mut scratch = Asm::default();
        let mut cp = ConstantPool::default();
        let mut g = Gen {
            asm: &mut scratch,
            cp: &mut cp,
            env: self.env,
            src: self.src,
        };
        g.value(e)
    }

    fn var(&self, e: &Expr, name: &str) -> Result<(u16, Kind, String), Refusal> {
        self.env
            .find(name)
            .map(|v| (v.1, v.2, v.3.clone()))
            .ok_or_else(|| self.fail(e, format!("{name:?} is not in scope at the site")))
    }

    /// Pushes the value of `e`.
    fn value(&mut self, e: &Expr) -> Result<Ty, Refusal> {
        match &e.kind {
            ExprKind::Literal(l) => self.literal(e, l),
            ExprKind::Path(ids) if ids.len() == 1 => self.load(e, &ids[0].name),
            ExprKind::Field { target, name } if matches!(target.kind, ExprKind::This) => {
                self.load(e, &name.name)
            }
            ExprKind::This => self.load(e, "this"),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => {
                let t = self.value(operand)?;
                self.asm.op(match t {
                    Ty::Int => Instruction::Ineg,
                    Ty::Long => Instruction::Lneg,
                    Ty::Float => Instruction::Fneg,
                    Ty::Double => Instruction::Dneg,
                    _ => return Err(self.fail(e, "only numbers negate")),
                });
                Ok(t)
            }
            ExprKind::Binary { op, lhs, rhs }
                if matches!(
                    op,
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem
                ) =>
            {
                let (lt, rt) = (self.peek(lhs)?, self.peek(rhs)?);
                if !lt.numeric() || !rt.numeric() {
                    return Err(self.fail(e, "arithmetic needs numbers (string concatenation is not compiled)"));
                }
                let t = if lt.rank() >= rt.rank() { lt } else { rt };
                self.value(lhs)?;
                self.widen(lt, t);
                self.value(rhs)?;
                self.widen(rt, t);
                use Instruction as I;
                let ops = match t {
                    Ty::Int => [I::Iadd, I::Isub, I::Imul, I::Idiv, I::Irem],
                    Ty::Long => [I::Ladd, I::Lsub, I::Lmul, I::Ldiv, I::Lrem],
                    Ty::Float => [I::Fadd, I::Fsub, I::Fmul, I::Fdiv, I::Frem],
                    _ => [I::Dadd, I::Dsub, I::Dmul, I::Ddiv, I::Drem],
                };
                let k = match op {
                    BinaryOp::Add => 0,
                    BinaryOp::Sub => 1,
                    BinaryOp::Mul => 2,
                    BinaryOp::Div => 3,
                    _ => 4,
                };
                self.asm.op(ops[k].clone());
                Ok(t)
            }
            ExprKind::Binary { .. } | ExprKind::Unary { .. } => {
                Err(self.fail(e, "a comparison's result is compiled only as a condition"))
            }
            ExprKind::Path(_) => Err(self.fail(
                e,
                "a chain into another object is read over the wire (a probe reads only locals and this class's fields)",
            )),
            ExprKind::Call { .. } => Err(self.fail(e, "a method call is not compiled into a probe")),
            _ => Err(self.fail(e, "this form is not compiled into a probe")),
        }
    }

    fn load(&mut self, e: &Expr, name: &str) -> Result<Ty, Refusal> {
        let (slot, kind, descriptor) = self.var(e, name)?;
        self.asm.op(kind.load(slot));
        Ok(match kind {
            Kind::Boolean => Ty::Bool,
            Kind::Long => Ty::Long,
            Kind::Float => Ty::Float,
            Kind::Double => Ty::Double,
            Kind::Ref => Ty::Ref {
                string: descriptor == "Ljava/lang/String;",
            },
            _ => Ty::Int,
        })
    }

    fn literal(&mut self, e: &Expr, l: &Literal) -> Result<Ty, Refusal> {
        match l {
            Literal::Int(v) => {
                self.int(*v)?;
                Ok(Ty::Int)
            }
            Literal::Char(c) => {
                self.int(i32::from(*c))?;
                Ok(Ty::Int)
            }
            Literal::Bool(b) => {
                self.int(i32::from(*b))?;
                Ok(Ty::Bool)
            }
            Literal::Long(v) => {
                let i = cpe(self.cp.add_long(*v))?;
                self.asm.op(Instruction::Ldc2_w(i));
                Ok(Ty::Long)
            }
            Literal::Double(v) => {
                let i = cpe(self.cp.add_double(*v))?;
                self.asm.op(Instruction::Ldc2_w(i));
                Ok(Ty::Double)
            }
            Literal::Float(v) => {
                let i = cpe(self.cp.add_float(*v))?;
                self.asm.op(Instruction::Ldc_w(i));
                Ok(Ty::Float)
            }
            Literal::Null => {
                self.asm.op(Instruction::Aconst_null);
                Ok(Ty::Null)
            }
            Literal::String(s) => {
                let i = cpe(self.cp.add_string(s.as_str()))?;
                self.asm.op(Instruction::Ldc_w(i));
                let _ = e;
                Ok(Ty::Ref { string: true })
            }
        }
    }

    fn int(&mut self, v: i32) -> Result<(), Refusal> {
        if let Ok(b) = i8::try_from(v) {
            self.asm.op(Instruction::Bipush(b));
        } else if let Ok(s) = i16::try_from(v) {
            self.asm.op(Instruction::Sipush(s));
        } else {
            let i = cpe(self.cp.add_integer(v))?;
            self.asm.op(Instruction::Ldc_w(i));
        }
        Ok(())
    }
}

fn cpe<T>(r: ristretto_classfile::Result<T>) -> Result<T, Refusal> {
    r.map_err(|e| Refusal::Unsupported(e.to_string()))
}

fn negate(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Eq => BinaryOp::Ne,
        BinaryOp::Ne => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Ge,
        BinaryOp::Le => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Le,
        BinaryOp::Ge => BinaryOp::Lt,
        other => other,
    }
}
