//! Recursive-descent parser equivalent to RocketMQ's JavaCC grammar (`SelectorParser.jj`),
//! including the compile-time checks of the expression factories.
//!
//! ```text
//! selector   := or                                  -- no end-of-input check
//! or         := and (OR and)*
//! and        := equality (AND equality)*
//! equality   := comparison ( '=' comparison | '<>' comparison | IS NULL | IS NOT NULL )*
//! comparison := unary ( ('>'|'>='|'<'|'<=') unary | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) str
//!                     | [NOT] BETWEEN unary AND unary | [NOT] IN '(' str (',' str)* ')' )*
//! unary      := '+' unary | '-' unary | NOT unary | primary
//! primary    := literal | identifier | '(' or ')'
//! ```
//! Once a loop sees a token that can start one of its alternatives it is committed: `a NOT x`,
//! `a IS x`, `a AND` are errors, while a token that starts no alternative ends the expression.

use mqviz_engine::vec_map::VecMap;
use std::collections::VecDeque;

use super::ast::{CmpOp, Const, Node, PropId, StrSet, TextOp};
use super::eval::compare_consts;
use super::lexer::{Kind, Lexer, Token};
use super::{CompileError, Sql92Version, MAX_AST_HEIGHT, MAX_NESTING_DEPTH};

/// A parsed sub-expression with its tree height and the character offset where it starts.
struct Parsed {
    node: Node,
    height: usize,
    pos: usize,
}

pub(crate) struct Parser<'s> {
    lexer: Lexer<'s>,
    ahead: VecDeque<Token<'s>>,
    names: VecMap<&'s str, u32>,
    depth: usize,
}

/// The parse result: the root node and the number of distinct property names.
pub(crate) struct Compiled {
    pub root: Node,
    pub names: Vec<Box<str>>,
}

fn err(position: usize, message: impl Into<String>) -> CompileError {
    CompileError { position, message: message.into() }
}

fn unexpected(t: &Token<'_>, expected: &str) -> CompileError {
    err(t.pos, format!("unexpected {}, expected {expected}", t.describe()))
}

/// Text of a string literal token without the quotes, `''` decoded to `'`.
fn decode_string(text: &str) -> Box<str> {
    let inner = &text[1..text.len() - 1];
    if inner.contains('\'') {
        inner.replace("''", "'").into_boxed_str()
    } else {
        inner.into()
    }
}

impl<'s> Parser<'s> {
    pub fn new(src: &'s str, version: Sql92Version) -> Self {
        Parser { lexer: Lexer::new(src, version), ahead: VecDeque::with_capacity(2), names: VecMap::new(), depth: 0 }
    }

    /// Parses a whole selector.
    pub fn parse(mut self) -> Result<Compiled, CompileError> {
        let e = self.parse_or()?;
        let root = self.as_boolean(e)?.node;
        let mut names = vec![Box::<str>::default(); self.names.len()];
        for (name, idx) in self.names {
            names[idx as usize] = name.into();
        }
        Ok(Compiled { root, names })
    }

    // ----------------------------------------------------------------------------- tokens

    fn fill(&mut self, n: usize) -> Result<(), CompileError> {
        while self.ahead.len() <= n {
            let t = self.lexer.next_token()?;
            self.ahead.push_back(t);
        }
        Ok(())
    }

    fn peek(&mut self) -> Result<Token<'s>, CompileError> {
        self.fill(0)?;
        Ok(self.ahead[0])
    }

    fn peek2(&mut self) -> Result<Token<'s>, CompileError> {
        self.fill(1)?;
        Ok(self.ahead[1])
    }

    /// Consumes the token returned by the last `peek`.
    fn bump(&mut self) -> Token<'s> {
        self.ahead.pop_front().expect("bump after peek")
    }

    fn expect(&mut self, kind: Kind, expected: &str) -> Result<Token<'s>, CompileError> {
        let t = self.peek()?;
        if t.kind != kind {
            return Err(unexpected(&t, expected));
        }
        Ok(self.bump())
    }

    fn string_literal(&mut self) -> Result<Box<str>, CompileError> {
        let t = self.expect(Kind::Str, "a string literal")?;
        Ok(decode_string(t.text))
    }

    // ----------------------------------------------------------------------------- helpers

    fn make(&self, node: Node, height: usize, pos: usize) -> Result<Parsed, CompileError> {
        if height > MAX_AST_HEIGHT {
            return Err(err(pos, format!("expression too deeply nested (tree height over {MAX_AST_HEIGHT})")));
        }
        Ok(Parsed { node, height, pos })
    }

    fn prop_id(&mut self, name: &'s str) -> PropId {
        let next = self.names.len() as u32;
        let idx = *self.names.entry(name).or_insert(next);
        PropId { idx, name: name.into() }
    }

    /// `asBooleanExpression`: boolean expressions pass, a bare property becomes a boolean cast,
    /// anything else is an error.
    fn as_boolean(&self, p: Parsed) -> Result<Parsed, CompileError> {
        if p.node.is_boolean() {
            return Ok(p);
        }
        match p.node {
            Node::Prop(id) => self.make(Node::BoolCast(id), p.height + 1, p.pos),
            other => Err(err(p.pos, format!("Expression will not result in a boolean value: {}", other.describe()))),
        }
    }

    /// `checkLessThanOperand`: only numeric literals and non-boolean expressions.
    fn check_ordered_operand(p: &Parsed) -> Result<(), CompileError> {
        let bad = match &p.node {
            Node::Const(c) => !matches!(c, Const::Int(_) | Const::Long(_) | Const::Double(_)),
            n => n.is_boolean(),
        };
        if bad {
            return Err(err(p.pos, format!("Value '{}' cannot be compared.", p.node.describe())));
        }
        Ok(())
    }

    /// `checkEqualOperand`: the NULL literal cannot be an operand of `=` / `<>`.
    fn check_equal_operand(p: &Parsed) -> Result<(), CompileError> {
        if matches!(p.node, Node::Const(Const::Null)) {
            return Err(err(p.pos, "'NULL' cannot be compared."));
        }
        Ok(())
    }

    fn create_equal(&self, l: Parsed, r: Parsed, pos: usize, negate: bool) -> Result<Parsed, CompileError> {
        Self::check_equal_operand(&l)?;
        Self::check_equal_operand(&r)?;
        // checkEqualOperandCompatability: a boolean literal on the left needs one on the right.
        if let (Node::Const(lc), Node::Const(rc)) = (&l.node, &r.node) {
            if matches!(lc, Const::Bool(_)) && !matches!(rc, Const::Bool(_) | Const::Null) {
                return Err(err(pos, format!("'{}' cannot be compared with '{}'", l.node.describe(), r.node.describe())));
            }
        }
        self.equal_node(l, r, negate)
    }

    fn equal_node(&self, l: Parsed, r: Parsed, negate: bool) -> Result<Parsed, CompileError> {
        let start = l.pos;
        let height = 1 + l.height.max(r.height);
        let eq = self.make(Node::Eq(Box::new(l.node), Box::new(r.node)), height, start)?;
        if negate {
            self.make(Node::Not(Box::new(eq.node)), height + 1, start)
        } else {
            Ok(eq)
        }
    }

    fn is_null(&self, l: Parsed, pos: usize, negate: bool) -> Result<Parsed, CompileError> {
        let null = Parsed { node: Node::Const(Const::Null), height: 1, pos };
        self.equal_node(l, null, negate)
    }

    fn create_cmp(&self, op: CmpOp, l: Parsed, r: Parsed) -> Result<Parsed, CompileError> {
        Self::check_ordered_operand(&l)?;
        Self::check_ordered_operand(&r)?;
        let (start, height) = (l.pos, 1 + l.height.max(r.height));
        self.make(Node::Cmp(op, Box::new(l.node), Box::new(r.node)), height, start)
    }

    fn create_between(
        &self,
        value: Parsed,
        low: Parsed,
        high: Parsed,
        pos: usize,
        negated: bool,
    ) -> Result<Parsed, CompileError> {
        if !negated {
            // createBetween checks literal bounds first (NOT BETWEEN does not).
            if let (Node::Const(lo), Node::Const(hi)) = (&low.node, &high.node) {
                if matches!(lo, Const::Null) || matches!(hi, Const::Null) {
                    return Err(err(pos, "Illegal values of between, values can not be null!"));
                }
                let c = compare_consts(hi, lo).map_err(|e| err(pos, e.message()))?;
                if c < 0 {
                    return Err(err(
                        pos,
                        format!(
                            "Illegal values of between, left value({}) must less than or equal to right value({})",
                            low.node.describe(),
                            high.node.describe()
                        ),
                    ));
                }
            }
        }
        Self::check_ordered_operand(&value)?;
        Self::check_ordered_operand(&low)?;
        Self::check_ordered_operand(&high)?;
        let height = 2 + value.height.max(low.height).max(high.height);
        let start = value.pos;
        let node = Node::Between { negated, value: Box::new(value.node), low: Box::new(low.node), high: Box::new(high.node) };
        self.make(node, height, start)
    }

    fn create_in(&self, l: Parsed, items: Vec<Box<str>>, pos: usize, negated: bool) -> Result<Parsed, CompileError> {
        match l.node {
            Node::Prop(prop) => self.make(Node::In { negated, prop, set: StrSet::new(items) }, l.height + 1, l.pos),
            other => Err(err(pos, format!("Expected a property for In expression, got: {}", other.describe()))),
        }
    }

    fn create_text(&self, op: TextOp, negated: bool, l: Parsed, search: Box<str>) -> Result<Parsed, CompileError> {
        let (start, height) = (l.pos, l.height + 1);
        self.make(Node::Text { op, negated, operand: Box::new(l.node), search }, height, start)
    }

    fn create_decimal(&self, t: &Token<'_>) -> Result<Parsed, CompileError> {
        let digits = t.text.trim_end_matches(['l', 'L']);
        let v: i64 = digits.parse().map_err(|_| err(t.pos, format!("NumberFormatException: For input string: \"{digits}\"")))?;
        let c = match i32::try_from(v) {
            Ok(i) => Const::Int(i),
            Err(_) => Const::Long(v),
        };
        self.make(Node::Const(c), 1, t.pos)
    }

    fn create_float(&self, t: &Token<'_>) -> Result<Parsed, CompileError> {
        let v: f64 = t.text.parse().map_err(|_| err(t.pos, format!("invalid number {}", t.text)))?;
        if v > f64::MAX {
            return Err(err(t.pos, format!("{} is greater than 1.7976931348623157E308", t.text)));
        }
        if v < f64::from_bits(1) {
            return Err(err(t.pos, format!("{} is less than 4.9E-324", t.text)));
        }
        self.make(Node::Const(Const::Double(v)), 1, t.pos)
    }

    // ----------------------------------------------------------------------------- grammar

    fn parse_or(&mut self) -> Result<Parsed, CompileError> {
        let first = self.parse_and()?;
        if self.peek()?.kind != Kind::Or {
            return Ok(first);
        }
        self.logic_chain(first, Kind::Or)
    }

    fn parse_and(&mut self) -> Result<Parsed, CompileError> {
        let first = self.parse_equality()?;
        if self.peek()?.kind != Kind::And {
            return Ok(first);
        }
        self.logic_chain(first, Kind::And)
    }

    /// `first (OP next)*` flattened into one n-ary node (left-to-right, same short-circuit).
    fn logic_chain(&mut self, first: Parsed, op: Kind) -> Result<Parsed, CompileError> {
        let start = first.pos;
        let mut pending = Some(first);
        let mut items = Vec::new();
        let mut height = 0;
        while self.peek()?.kind == op {
            self.bump();
            let right = if op == Kind::Or { self.parse_and()? } else { self.parse_equality()? };
            if let Some(left) = pending.take() {
                let left = self.as_boolean(left)?;
                height = height.max(left.height);
                items.push(left.node);
            }
            let right = self.as_boolean(right)?;
            height = height.max(right.height);
            items.push(right.node);
        }
        let node = if op == Kind::Or { Node::Or(items) } else { Node::And(items) };
        self.make(node, height + 1, start)
    }

    fn parse_equality(&mut self) -> Result<Parsed, CompileError> {
        let mut left = self.parse_comparison()?;
        loop {
            let t = self.peek()?;
            left = match t.kind {
                Kind::Eq | Kind::Ne => {
                    self.bump();
                    let right = self.parse_comparison()?;
                    self.create_equal(left, right, t.pos, t.kind == Kind::Ne)?
                }
                Kind::Is => {
                    if self.peek2()?.kind == Kind::Null {
                        self.bump();
                        self.bump();
                        self.is_null(left, t.pos, false)?
                    } else {
                        self.bump();
                        self.expect(Kind::Not, "NULL or NOT NULL after IS")?;
                        self.expect(Kind::Null, "NULL after IS NOT")?;
                        self.is_null(left, t.pos, true)?
                    }
                }
                _ => return Ok(left),
            };
        }
    }

    fn text_op(kind: Kind) -> Option<TextOp> {
        match kind {
            Kind::Contains => Some(TextOp::Contains),
            Kind::StartsWith => Some(TextOp::StartsWith),
            Kind::EndsWith => Some(TextOp::EndsWith),
            _ => None,
        }
    }

    fn parse_comparison(&mut self) -> Result<Parsed, CompileError> {
        let mut left = self.parse_unary()?;
        loop {
            let t = self.peek()?;
            let cmp = match t.kind {
                Kind::Gt => Some(CmpOp::Gt),
                Kind::Ge => Some(CmpOp::Ge),
                Kind::Lt => Some(CmpOp::Lt),
                Kind::Le => Some(CmpOp::Le),
                _ => None,
            };
            if let Some(op) = cmp {
                self.bump();
                let right = self.parse_unary()?;
                left = self.create_cmp(op, left, right)?;
                continue;
            }
            let (negated, kind) = match t.kind {
                Kind::Not => {
                    let t2 = self.peek2()?;
                    if !matches!(t2.kind, Kind::Between | Kind::In) && Self::text_op(t2.kind).is_none() {
                        return Err(unexpected(&t, "BETWEEN, IN, CONTAINS, STARTSWITH or ENDSWITH after NOT"));
                    }
                    self.bump();
                    (true, t2.kind)
                }
                Kind::Between | Kind::In | Kind::Contains | Kind::StartsWith | Kind::EndsWith => (false, t.kind),
                _ => return Ok(left),
            };
            let kw = self.bump();
            left = match kind {
                Kind::Between => {
                    let low = self.parse_unary()?;
                    self.expect(Kind::And, "AND in BETWEEN")?;
                    let high = self.parse_unary()?;
                    self.create_between(left, low, high, kw.pos, negated)?
                }
                Kind::In => {
                    self.expect(Kind::LParen, "'(' after IN")?;
                    let mut items = vec![self.string_literal()?];
                    while self.peek()?.kind == Kind::Comma {
                        self.bump();
                        items.push(self.string_literal()?);
                    }
                    self.expect(Kind::RParen, "',' or ')' in the IN list")?;
                    self.create_in(left, items, kw.pos, negated)?
                }
                _ => {
                    let op = Self::text_op(kind).expect("text operator");
                    let search = self.string_literal()?;
                    self.create_text(op, negated, left, search)?
                }
            };
        }
    }

    fn parse_unary(&mut self) -> Result<Parsed, CompileError> {
        let t = self.peek()?;
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(err(
                t.pos,
                format!("expression too deeply nested (more than {MAX_NESTING_DEPTH} levels of parentheses or prefix operators)"),
            ));
        }
        self.depth += 1;
        let result = self.parse_unary_inner(t);
        self.depth -= 1;
        result
    }

    fn parse_unary_inner(&mut self, t: Token<'s>) -> Result<Parsed, CompileError> {
        match t.kind {
            // Unary plus returns its operand unchanged (so `+5` is still a literal).
            Kind::Plus => {
                self.bump();
                self.parse_unary()
            }
            Kind::Minus => {
                self.bump();
                let x = self.parse_unary()?;
                self.make(Node::Neg(Box::new(x.node)), x.height + 1, t.pos)
            }
            Kind::Not => {
                self.bump();
                let x = self.parse_unary()?;
                let x = self.as_boolean(x)?;
                self.make(Node::Not(Box::new(x.node)), x.height + 1, t.pos)
            }
            _ => self.parse_primary(t),
        }
    }

    fn parse_primary(&mut self, t: Token<'s>) -> Result<Parsed, CompileError> {
        let c = match t.kind {
            Kind::Str => Const::Str(decode_string(t.text)),
            Kind::True => Const::Bool(true),
            Kind::False => Const::Bool(false),
            Kind::Null => Const::Null,
            Kind::Decimal => {
                self.bump();
                return self.create_decimal(&t);
            }
            Kind::Float => {
                self.bump();
                return self.create_float(&t);
            }
            Kind::Id => {
                self.bump();
                let id = self.prop_id(t.text);
                return self.make(Node::Prop(id), 1, t.pos);
            }
            Kind::LParen => {
                self.bump();
                let inner = self.parse_or()?;
                self.expect(Kind::RParen, "')'")?;
                return Ok(inner);
            }
            _ => return Err(unexpected(&t, "a literal, a property name, '(' , NOT, '+' or '-'")),
        };
        self.bump();
        self.make(Node::Const(c), 1, t.pos)
    }
}
