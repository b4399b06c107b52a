//! Evaluation with RocketMQ's semantics (`ComparisonExpression`, `LogicExpression`,
//! `UnaryExpression`, `UnaryInExpression`), allocation-free unless evaluation fails.

use super::ast::{CmpOp, Const, Node, PropId};
use super::javanum::{self, NumError};
use super::PropRef;

/// A runtime value: Java `null`, `String`, `Integer`, `Long`, `Double`, `Boolean`, or some other
/// object (identified by the property it came from, so `a = a` is the same instance).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Val<'a> {
    Null,
    Str(&'a str),
    Int(i32),
    Long(i64),
    Double(f64),
    Bool(bool),
    Object(u32),
}

impl<'a> Val<'a> {
    fn from_const(c: &'a Const) -> Val<'a> {
        match c {
            Const::Null => Val::Null,
            Const::Bool(b) => Val::Bool(*b),
            Const::Int(v) => Val::Int(*v),
            Const::Long(v) => Val::Long(*v),
            Const::Double(v) => Val::Double(*v),
            Const::Str(s) => Val::Str(s),
        }
    }

    fn from_prop(p: Option<PropRef<'a>>, idx: u32) -> Val<'a> {
        match p {
            None | Some(PropRef::Null) => Val::Null,
            Some(PropRef::Str(s)) => Val::Str(s),
            Some(PropRef::Int(v)) => Val::Int(v),
            Some(PropRef::Long(v)) => Val::Long(v),
            Some(PropRef::Double(v)) => Val::Double(v),
            Some(PropRef::Bool(v)) => Val::Bool(v),
            Some(PropRef::Object) => Val::Object(idx),
        }
    }
}

/// Why evaluation threw (the broker then treats the message as not matched).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EvalError {
    /// `NumberFormatException` on this input text.
    NumberFormat(String),
    /// `NumberFormatException: empty String` (`Double.valueOf("")`).
    EmptyDouble,
    /// `ClassCastException` with this description.
    ClassCast(&'static str),
}

impl EvalError {
    fn number(e: NumError, text: &str) -> EvalError {
        match e {
            NumError::Format => EvalError::NumberFormat(text.to_string()),
            NumError::Empty => EvalError::EmptyDouble,
        }
    }

    pub fn message(&self) -> String {
        match self {
            EvalError::NumberFormat(s) => format!("NumberFormatException: For input string: \"{s}\""),
            EvalError::EmptyDouble => "NumberFormatException: empty String".to_string(),
            EvalError::ClassCast(what) => format!("ClassCastException: {what}"),
        }
    }
}

type EvalResult<'a> = Result<Val<'a>, EvalError>;

/// Where property values come from during one evaluation.
pub(crate) trait Source<'a> {
    fn get(&self, prop: &PropId) -> Option<PropRef<'a>>;
}

fn parse_int(s: &str) -> Result<i32, EvalError> {
    javanum::parse_int(s).map_err(|e| EvalError::number(e, s))
}

fn parse_long(s: &str) -> Result<i64, EvalError> {
    javanum::parse_long(s).map_err(|e| EvalError::number(e, s))
}

fn parse_double(s: &str) -> Result<f64, EvalError> {
    javanum::parse_double(s).map_err(|e| EvalError::number(e, s))
}

fn ord<T: Ord>(a: T, b: T) -> i32 {
    a.cmp(&b) as i32
}

/// Java `String.compareTo` (UTF-16 code unit order).
fn string_compare(a: &str, b: &str) -> i32 {
    a.encode_utf16().cmp(b.encode_utf16()) as i32
}

/// `ComparisonExpression.__compare(lv, rv, convertStringExpressions = true)`: converts the right
/// or left operand so both have one type, then `compareTo`. Mismatches it cannot convert give -1.
pub(crate) fn java_compare(lv: Val<'_>, rv: Val<'_>) -> Result<i32, EvalError> {
    use Val::*;
    Ok(match (lv, rv) {
        (Str(a), Str(b)) => string_compare(a, b),
        (Int(a), Int(b)) => ord(a, b),
        (Long(a), Long(b)) => ord(a, b),
        (Double(a), Double(b)) => javanum::double_compare(a, b),
        (Bool(a), Bool(b)) => ord(a, b),
        // Upstream casts the *left* Boolean to String here.
        (Bool(_), Str(_)) => {
            return Err(EvalError::ClassCast("class java.lang.Boolean cannot be cast to class java.lang.String"))
        }
        (Int(a), Long(b)) => ord(i64::from(a), b),
        (Int(a), Double(b)) => javanum::double_compare(f64::from(a), b),
        (Int(a), Str(b)) => ord(a, parse_int(b)?),
        (Long(a), Int(b)) => ord(a, i64::from(b)),
        (Long(a), Double(b)) => javanum::double_compare(a as f64, b),
        (Long(a), Str(b)) => ord(a, parse_long(b)?),
        (Double(a), Int(b)) => javanum::double_compare(a, f64::from(b)),
        (Double(a), Long(b)) => javanum::double_compare(a, b as f64),
        (Double(a), Str(b)) => javanum::double_compare(a, parse_double(b)?),
        (Str(a), Bool(b)) => ord(javanum::parse_bool(a), b),
        (Str(a), Int(b)) => ord(parse_int(a)?, b),
        (Str(a), Long(b)) => ord(parse_long(a)?, b),
        (Str(a), Double(b)) => javanum::double_compare(parse_double(a)?, b),
        _ => -1,
    })
}

/// Java `lv.equals(rv)` for non-null values.
fn java_equals(lv: Val<'_>, rv: Val<'_>) -> bool {
    use Val::*;
    match (lv, rv) {
        (Str(a), Str(b)) => a == b,
        (Int(a), Int(b)) => a == b,
        (Long(a), Long(b)) => a == b,
        (Double(a), Double(b)) => javanum::double_equals(a, b),
        (Bool(a), Bool(b)) => a == b,
        (Object(a), Object(b)) => a == b,
        _ => false,
    }
}

/// The `(Comparable)` cast in `ComparisonExpression.evaluate`.
fn check_comparable(v: Val<'_>) -> Result<(), EvalError> {
    match v {
        Val::Object(_) => Err(EvalError::ClassCast("object cannot be cast to class java.lang.Comparable")),
        _ => Ok(()),
    }
}

fn tri(v: Option<bool>) -> Val<'static> {
    match v {
        Some(b) => Val::Bool(b),
        None => Val::Null,
    }
}

/// The three-valued boolean a boolean sub-expression produced (`None` = NULL).
fn as_tri(v: Val<'_>) -> Option<bool> {
    match v {
        Val::Bool(b) => Some(b),
        _ => None,
    }
}

/// `>`, `>=`, `<`, `<=` once the left value is known: NULL if either side is null (the right side
/// is not evaluated when the left one is null); two Strings are both parsed as Double first.
fn compare_with<'a, S: Source<'a>>(op: CmpOp, lv: Val<'a>, right: &'a Node, src: &S) -> Result<Option<bool>, EvalError> {
    check_comparable(lv)?;
    if matches!(lv, Val::Null) {
        return Ok(None);
    }
    let rv = eval(right, src)?;
    check_comparable(rv)?;
    if matches!(rv, Val::Null) {
        return Ok(None);
    }
    let c = match (lv, rv) {
        (Val::Str(a), Val::Str(b)) => {
            let a = parse_double(a)?;
            let b = parse_double(b)?;
            javanum::double_compare(a, b)
        }
        _ => java_compare(lv, rv)?,
    };
    Ok(Some(op.test(c)))
}

pub(crate) fn eval<'a, S: Source<'a>>(node: &'a Node, src: &S) -> EvalResult<'a> {
    Ok(match node {
        Node::Const(c) => Val::from_const(c),
        Node::Prop(p) => Val::from_prop(src.get(p), p.idx),
        Node::Neg(x) => match eval(x, src)? {
            Val::Int(v) => Val::Int(v.wrapping_neg()),
            Val::Long(v) => Val::Long(v.wrapping_neg()),
            Val::Double(v) => Val::Double(-v),
            _ => Val::Null,
        },
        Node::BoolCast(p) => match Val::from_prop(src.get(p), p.idx) {
            Val::Null => Val::Null,
            Val::Bool(b) => Val::Bool(b),
            _ => Val::Bool(false),
        },
        Node::Not(x) => tri(as_tri(eval(x, src)?).map(|b| !b)),
        Node::And(xs) => {
            let mut saw_null = false;
            for x in xs {
                match as_tri(eval(x, src)?) {
                    Some(false) => return Ok(Val::Bool(false)),
                    Some(true) => {}
                    None => saw_null = true,
                }
            }
            tri((!saw_null).then_some(true))
        }
        Node::Or(xs) => {
            let mut saw_null = false;
            for x in xs {
                match as_tri(eval(x, src)?) {
                    Some(true) => return Ok(Val::Bool(true)),
                    Some(false) => {}
                    None => saw_null = true,
                }
            }
            tri((!saw_null).then_some(false))
        }
        Node::Eq(l, r) => {
            let lv = eval(l, src)?;
            let rv = eval(r, src)?;
            match (matches!(lv, Val::Null), matches!(rv, Val::Null)) {
                (true, true) => Val::Bool(true),
                (true, false) => Val::Null,
                (false, true) => Val::Bool(false),
                (false, false) => {
                    if java_equals(lv, rv) {
                        Val::Bool(true)
                    } else if matches!(lv, Val::Object(_)) || matches!(rv, Val::Object(_)) {
                        Val::Bool(false)
                    } else {
                        Val::Bool(java_compare(lv, rv)? == 0)
                    }
                }
            }
        }
        Node::Cmp(op, l, r) => tri(compare_with(*op, eval(l, src)?, r, src)?),
        Node::Between { negated, value, low, high } => {
            // The value expression is pure, so evaluating it once is the same as upstream's twice.
            let v = eval(value, src)?;
            if *negated {
                let first = compare_with(CmpOp::Lt, v, low, src)?;
                if first == Some(true) {
                    return Ok(Val::Bool(true));
                }
                let second = compare_with(CmpOp::Gt, v, high, src)?;
                match (first, second) {
                    (_, Some(true)) => Val::Bool(true),
                    (Some(false), Some(false)) => Val::Bool(false),
                    _ => Val::Null,
                }
            } else {
                let first = compare_with(CmpOp::Ge, v, low, src)?;
                if first == Some(false) {
                    return Ok(Val::Bool(false));
                }
                let second = compare_with(CmpOp::Le, v, high, src)?;
                match (first, second) {
                    (_, Some(false)) => Val::Bool(false),
                    (Some(true), Some(true)) => Val::Bool(true),
                    _ => Val::Null,
                }
            }
        }
        Node::In { negated, prop, set } => match Val::from_prop(src.get(prop), prop.idx) {
            Val::Str(s) => Val::Bool(set.contains(s) != *negated),
            _ => Val::Null,
        },
        Node::Text { op, negated, operand, search } => {
            if search.is_empty() {
                return Ok(Val::Bool(false));
            }
            match eval(operand, src)? {
                Val::Str(s) => Val::Bool(op.test(s, search) != *negated),
                _ => Val::Bool(false),
            }
        }
    })
}

/// `__compare` on two literals (the BETWEEN bounds check at compile time).
pub(crate) fn compare_consts(l: &Const, r: &Const) -> Result<i32, EvalError> {
    java_compare(Val::from_const(l), Val::from_const(r))
}
