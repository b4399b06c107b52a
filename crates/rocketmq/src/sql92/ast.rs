//! The compiled expression tree. Node kinds mirror RocketMQ's expression classes; literal values
//! are typed once at compile time.

use mqviz_engine::sort::StableSort;
use std::fmt::Write as _;

/// A literal (`ConstantExpression`; `TRUE`, `FALSE` and `NULL` are `BooleanConstantExpression`s).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Const {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    Str(Box<str>),
}

/// A property reference: its name and its index among the expression's distinct names.
#[derive(Clone, Debug)]
pub(crate) struct PropId {
    pub idx: u32,
    pub name: Box<str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Gt,
    Ge,
    Lt,
    Le,
}

impl CmpOp {
    /// `asBoolean(compareResult)` of the Java comparison classes.
    pub fn test(self, c: i32) -> bool {
        match self {
            CmpOp::Gt => c > 0,
            CmpOp::Ge => c >= 0,
            CmpOp::Lt => c < 0,
            CmpOp::Le => c <= 0,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextOp {
    Contains,
    StartsWith,
    EndsWith,
}

impl TextOp {
    pub fn test(self, value: &str, search: &str) -> bool {
        match self {
            TextOp::Contains => value.contains(search),
            TextOp::StartsWith => value.starts_with(search),
            TextOp::EndsWith => value.ends_with(search),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            TextOp::Contains => "CONTAINS",
            TextOp::StartsWith => "STARTSWITH",
            TextOp::EndsWith => "ENDSWITH",
        }
    }
}

/// The string list of an `IN`: scanned linearly when short, binary-searched when long.
#[derive(Clone, Debug)]
pub(crate) struct StrSet {
    items: Vec<Box<str>>,
    sorted: bool,
}

impl StrSet {
    pub fn new(mut items: Vec<Box<str>>) -> Self {
        let sorted = items.len() > 8;
        if sorted {
            items.stable_sort();
            items.dedup();
        }
        StrSet { items, sorted }
    }

    pub fn contains(&self, s: &str) -> bool {
        if self.sorted {
            self.items.binary_search_by(|x| (**x).cmp(s)).is_ok()
        } else {
            self.items.iter().any(|x| &**x == s)
        }
    }

    pub fn items(&self) -> &[Box<str>] {
        &self.items
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A literal.
    Const(Const),
    /// A property value (`PropertyExpression`).
    Prop(PropId),
    /// Unary minus (`UnaryExpression.createNegate`): numbers negate, anything else is NULL.
    Neg(Box<Node>),
    /// A bare property used as a boolean (`createBooleanCast`).
    BoolCast(PropId),
    Not(Box<Node>),
    /// `a AND b AND c ...`: a left-deep chain flattened (same order and short-circuit).
    And(Vec<Node>),
    Or(Vec<Node>),
    /// `=` (`IS NULL` is `= NULL` without the operand checks).
    Eq(Box<Node>, Box<Node>),
    Cmp(CmpOp, Box<Node>, Box<Node>),
    /// `v BETWEEN lo AND hi` = `v >= lo AND v <= hi`; negated: `v < lo OR v > hi`.
    Between {
        negated: bool,
        value: Box<Node>,
        low: Box<Node>,
        high: Box<Node>,
    },
    In {
        negated: bool,
        prop: PropId,
        set: StrSet,
    },
    /// `CONTAINS`, `STARTSWITH`, `ENDSWITH` (5.x).
    Text {
        op: TextOp,
        negated: bool,
        operand: Box<Node>,
        search: Box<str>,
    },
}

impl Node {
    /// Java `instanceof BooleanExpression`.
    pub fn is_boolean(&self) -> bool {
        match self {
            Node::Const(c) => matches!(c, Const::Null | Const::Bool(_)),
            Node::Prop(_) | Node::Neg(_) => false,
            _ => true,
        }
    }

    /// Java `toString()` of the expression, approximately (used in error messages only).
    pub fn describe(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, out: &mut String) {
        match self {
            Node::Const(c) => write_const(c, out),
            Node::Prop(p) | Node::BoolCast(p) => out.push_str(&p.name),
            Node::Neg(x) => {
                out.push_str("(- ");
                x.write(out);
                out.push(')');
            }
            Node::Not(x) => {
                out.push_str("(NOT ");
                x.write(out);
                out.push(')');
            }
            Node::And(xs) | Node::Or(xs) => {
                let sym = if matches!(self, Node::And(_)) { " && " } else { " || " };
                out.push('(');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(sym);
                    }
                    x.write(out);
                }
                out.push(')');
            }
            Node::Eq(l, r) => write_binary(l, "==", r, out),
            Node::Cmp(op, l, r) => write_binary(l, op.symbol(), r, out),
            Node::Between { negated, value, low, high } => {
                out.push('(');
                value.write(out);
                out.push_str(if *negated { " NOT BETWEEN " } else { " BETWEEN " });
                low.write(out);
                out.push_str(" AND ");
                high.write(out);
                out.push(')');
            }
            Node::In { negated, prop, set } => {
                out.push_str(&prop.name);
                out.push_str(if *negated { " NOT IN ( " } else { " IN ( " });
                for (i, item) in set.items().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(item);
                }
                out.push_str(" )");
            }
            Node::Text { op, negated, operand, .. } => {
                out.push('(');
                if *negated {
                    out.push_str("NOT ");
                }
                out.push_str(op.symbol());
                out.push(' ');
                operand.write(out);
                out.push(')');
            }
        }
    }
}

fn write_binary(l: &Node, sym: &str, r: &Node, out: &mut String) {
    out.push('(');
    l.write(out);
    let _ = write!(out, " {sym} ");
    r.write(out);
    out.push(')');
}

/// Java `ConstantExpression.toString()`.
pub(crate) fn write_const(c: &Const, out: &mut String) {
    match c {
        Const::Null => out.push_str("NULL"),
        Const::Bool(true) => out.push_str("TRUE"),
        Const::Bool(false) => out.push_str("FALSE"),
        Const::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Const::Long(v) => {
            let _ = write!(out, "{v}");
        }
        Const::Double(v) => out.push_str(&java_double_string(*v)),
        Const::Str(s) => {
            out.push('\'');
            out.push_str(&s.replace('\'', "''"));
            out.push('\'');
        }
    }
}

/// Close to Java's `Double.toString` for messages: `100.0`, `0.5`, `1.0E10`.
pub(crate) fn java_double_string(v: f64) -> String {
    if v.is_finite() && v != 0.0 && (v.abs() >= 1e7 || v.abs() < 1e-3) {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') { m.to_string() } else { format!("{m}.0") };
        format!("{m}E{e}")
    } else if v.is_finite() && v.fract() == 0.0 {
        // Below 1e7 a whole number fits an i64; -0.0 keeps its sign, as Java prints it.
        let sign = if v == 0.0 && v.is_sign_negative() { "-" } else { "" };
        format!("{sign}{}.0", v as i64)
    } else {
        format!("{v}")
    }
}
