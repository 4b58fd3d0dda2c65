//! Java's numeric rules for the evaluator: binary numeric promotion,
//! comparison and arithmetic on promoted values, negation.

use super::Val;
use crate::expr::ast::BinaryOp;
use crate::model::Prim;

/// A number after Java's binary numeric promotion.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    I(i32),
    L(i64),
    F(f32),
    D(f64),
}

pub(super) fn num(v: &Val) -> Option<Num> {
    Some(match *v {
        Val::Prim(Prim::Byte(x)) => Num::I(i32::from(x)),
        Val::Prim(Prim::Short(x)) => Num::I(i32::from(x)),
        Val::Prim(Prim::Char(x)) => Num::I(i32::from(x)),
        Val::Prim(Prim::Int(x)) => Num::I(x),
        Val::Prim(Prim::Long(x)) => Num::L(x),
        Val::Prim(Prim::Float(x)) => Num::F(x),
        Val::Prim(Prim::Double(x)) => Num::D(x),
        _ => return None,
    })
}

pub(super) fn negate(v: &Val) -> Option<Val> {
    Some(match num(v)? {
        Num::I(i) => Val::Prim(Prim::Int(i.wrapping_neg())),
        Num::L(l) => Val::Prim(Prim::Long(l.wrapping_neg())),
        Num::F(f) => Val::Prim(Prim::Float(-f)),
        Num::D(d) => Val::Prim(Prim::Double(-d)),
    })
}

pub(super) fn arith(op: BinaryOp, a: Num, b: Num) -> Result<Val, &'static str> {
    use Num::*;
    // Promote both to the wider kind.
    let (a, b) = match (a, b) {
        (D(_), _) | (_, D(_)) => (D(to_f64(a)), D(to_f64(b))),
        (F(_), _) | (_, F(_)) => (F(to_f64(a) as f32), F(to_f64(b) as f32)),
        (L(_), _) | (_, L(_)) => (L(to_i64(a)), L(to_i64(b))),
        _ => (a, b),
    };
    let cmp = |o: Option<std::cmp::Ordering>| -> Result<Val, &'static str> {
        use std::cmp::Ordering::*;
        Ok(Val::Prim(Prim::Bool(match (op, o) {
            (_, None) => op == BinaryOp::Ne,
            (BinaryOp::Eq, Some(o)) => o == Equal,
            (BinaryOp::Ne, Some(o)) => o != Equal,
            (BinaryOp::Lt, Some(o)) => o == Less,
            (BinaryOp::Le, Some(o)) => o != Greater,
            (BinaryOp::Gt, Some(o)) => o == Greater,
            (BinaryOp::Ge, Some(o)) => o != Less,
            _ => return Err("not a comparison"),
        })))
    };
    match op {
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            match (a, b) {
                (I(x), I(y)) => cmp(Some(x.cmp(&y))),
                (L(x), L(y)) => cmp(Some(x.cmp(&y))),
                (F(x), F(y)) => cmp(x.partial_cmp(&y)),
                (D(x), D(y)) => cmp(x.partial_cmp(&y)),
                _ => Err("mixed numbers"),
            }
        }
        _ => match (a, b) {
            (I(x), I(y)) => Ok(Val::Prim(Prim::Int(match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Div if y == 0 => return Err("division by zero"),
                BinaryOp::Div => x.wrapping_div(y),
                BinaryOp::Rem if y == 0 => return Err("division by zero"),
                BinaryOp::Rem => x.wrapping_rem(y),
                _ => return Err("not arithmetic"),
            }))),
            (L(x), L(y)) => Ok(Val::Prim(Prim::Long(match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Div if y == 0 => return Err("division by zero"),
                BinaryOp::Div => x.wrapping_div(y),
                BinaryOp::Rem if y == 0 => return Err("division by zero"),
                BinaryOp::Rem => x.wrapping_rem(y),
                _ => return Err("not arithmetic"),
            }))),
            (F(x), F(y)) => Ok(Val::Prim(Prim::Float(match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                BinaryOp::Rem => x % y,
                _ => return Err("not arithmetic"),
            }))),
            (D(x), D(y)) => Ok(Val::Prim(Prim::Double(match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                BinaryOp::Rem => x % y,
                _ => return Err("not arithmetic"),
            }))),
            _ => Err("mixed numbers"),
        },
    }
}

fn to_f64(n: Num) -> f64 {
    match n {
        Num::I(i) => f64::from(i),
        Num::L(l) => l as f64,
        Num::F(f) => f64::from(f),
        Num::D(d) => d,
    }
}

fn to_i64(n: Num) -> i64 {
    match n {
        Num::I(i) => i64::from(i),
        Num::L(l) => l,
        Num::F(f) => f as i64,
        Num::D(d) => d as i64,
    }
}
