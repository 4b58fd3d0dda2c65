//! The precedence-climbing parser: tokens to an [`Expr`] tree, with errors
//! that name the column, what was expected and what was found.
//!
//! Bounded on every input: the source length, the parser's own nesting and
//! the height of the tree it builds are all capped, so no string can
//! overflow the stack here or in anything that walks the tree recursively.

use std::fmt;

use super::ast::{BinaryOp, Expr, ExprKind, Ident, Literal, NodeId, Parsed, Span, UnaryOp};
use super::lexer::{Tok, Token, quote, tokenize};

/// The longest source accepted, in characters.
pub const MAX_SOURCE_CHARS: usize = 4000;

/// How deeply brackets, parentheses, call arguments and prefix operators
/// may nest.
pub const MAX_NESTING: usize = 64;

/// The tallest tree accepted (a chain of 128 `.x()` links, or `a + a + …`
/// with 129 terms, is refused), so recursive walkers — `Display`, the derived
/// `Debug`/`Clone`/`PartialEq`, the evaluator — have a known bound. Walking a
/// tree this tall with the derived impls takes under 256 KiB of stack in a
/// debug build.
pub const MAX_TREE_HEIGHT: u16 = 128;

/// The deepest caller frame `frame[N].x` may name.
pub const MAX_FRAME_DEPTH: u32 = 4096;

/// Why a source string is not an expression (also used by the checker).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParseError {
    /// The offending token.
    pub span: Span,
    /// 1-based character column of `span.start`.
    pub column: usize,
    /// What would have been accepted there, e.g. "`]`", "an expression".
    pub expected: String,
    /// What was there, e.g. "`)`", "end of input", "`foo`".
    pub found: String,
}

impl ParseError {
    /// An error at `span` in `src`; computes the column.
    pub fn new(
        src: &str,
        span: Span,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        ParseError {
            span,
            column: span.column(src),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The source line and a `^` under the column, for replies. Control
    /// characters show as spaces so the caret lines up; a long source is
    /// cut to a window around the column, marked with `…`.
    pub fn caret(&self, src: &str) -> String {
        const WIDTH: usize = 100;
        let line: Vec<char> = src
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let col = self.column.saturating_sub(1).min(line.len());
        let (from, to) = if line.len() <= WIDTH {
            (0, line.len())
        } else {
            let from = col.saturating_sub(WIDTH / 2).min(line.len() - WIDTH);
            (from, from + WIDTH)
        };
        let mut out = String::new();
        if from > 0 {
            out.push('…');
        }
        out.extend(line.iter().skip(from).take(to - from));
        if to < line.len() {
            out.push('…');
        }
        out.push('\n');
        let pad = col - from + usize::from(from > 0);
        out.extend(std::iter::repeat_n(' ', pad));
        out.push('^');
        out
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "column {}: expected {}, found {}",
            self.column, self.expected, self.found
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses one expression, with an optional trailing `#charset`.
///
/// Never panics, whatever `src` holds; see the module docs for the limits.
pub fn parse(src: &str) -> Result<Parsed, ParseError> {
    #[cfg(any(test, feature = "parse-count"))]
    count::one();
    if src.len() > MAX_SOURCE_CHARS {
        let count = src.chars().count();
        if count > MAX_SOURCE_CHARS {
            let start = src
                .char_indices()
                .nth(MAX_SOURCE_CHARS)
                .map_or(src.len(), |c| c.0);
            return Err(ParseError::new(
                src,
                Span::new(start, src.len()),
                format!("an expression of at most {MAX_SOURCE_CHARS} characters"),
                format!("{count} characters"),
            ));
        }
    }
    let toks = tokenize(src);
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        next_id: 0,
        heights: Vec::new(),
        depth: 0,
    };
    let expr = *p.expr().map_err(|e| *e)?;
    let charset = match p.peek(0).kind {
        Tok::Charset(c) => {
            p.bump();
            Some(c)
        }
        _ => None,
    };
    let expected = match p.peek(0).kind {
        Tok::Eof => None,
        Tok::DotDot => Some("an operator or end of input (`..` only slices inside `[…]`)"),
        Tok::Charset(_) => Some("end of input (only one `#charset`)"),
        _ if charset.is_some() => Some("end of input (a `#charset` must come last)"),
        _ => Some("an operator or end of input"),
    };
    if let Some(expected) = expected {
        return Err(*p.unexpected(expected));
    }
    Ok(Parsed {
        expr,
        charset,
        source: src.to_string(),
        node_count: p.next_id,
    })
}

struct Parser<'s> {
    src: &'s str,
    /// Always ends with `Eof` or `Error`; `pos` never moves past it.
    toks: Vec<Token>,
    pos: usize,
    next_id: u32,
    /// Height of each node built so far, by id.
    heights: Vec<u16>,
    /// Current nesting, checked against `MAX_NESTING`.
    depth: usize,
}

/// Returned by `peek` if the token list were ever empty (it never is).
static EOF: Token = Token {
    kind: Tok::Eof,
    span: Span { start: 0, end: 0 },
};

fn binop(t: &Tok) -> Option<BinaryOp> {
    Some(match t {
        Tok::OrOr => BinaryOp::Or,
        Tok::AndAnd => BinaryOp::And,
        Tok::EqEq => BinaryOp::Eq,
        Tok::NotEq => BinaryOp::Ne,
        Tok::Lt => BinaryOp::Lt,
        Tok::Le => BinaryOp::Le,
        Tok::Gt => BinaryOp::Gt,
        Tok::Ge => BinaryOp::Ge,
        Tok::Plus => BinaryOp::Add,
        Tok::Minus => BinaryOp::Sub,
        Tok::Star => BinaryOp::Mul,
        Tok::Slash => BinaryOp::Div,
        Tok::Percent => BinaryOp::Rem,
        _ => return None,
    })
}

/// Internal results box both sides so the recursive spine of the parser
/// moves 16-byte values instead of 100-byte ones; that keeps each stack frame
/// small (debug builds give every temporary its own slot).
type PResult<T> = Result<T, Box<ParseError>>;

/// A built node.
type Node = Box<Expr>;

/// What a leading identifier chain turned out to be.
enum Head {
    /// A finished `Path` or `PinnedClass`.
    Done(Node),
    /// A call still to parse from its `(`: on this target, with this name.
    Call(Option<Node>, Ident),
}

impl Parser<'_> {
    /// The token `n` places ahead, saturating at the final token.
    fn peek(&self, n: usize) -> &Token {
        self.toks
            .get(self.pos + n)
            .or_else(|| self.toks.last())
            .unwrap_or(&EOF)
    }

    /// Takes the current token and moves on (never past the final one).
    fn bump(&mut self) -> Token {
        if self.pos + 1 < self.toks.len() {
            let placeholder = Token {
                kind: Tok::Eof,
                span: Span::default(),
            };
            let t = self
                .toks
                .get_mut(self.pos)
                .map(|t| std::mem::replace(t, placeholder));
            self.pos += 1;
            t.unwrap_or_else(|| EOF.clone())
        } else {
            self.peek(0).clone()
        }
    }

    fn at(&self, t: &Tok) -> bool {
        &self.peek(0).kind == t
    }

    /// An error about the current token; a lexical error there wins.
    #[cold]
    #[inline(never)]
    fn unexpected(&self, expected: &str) -> Box<ParseError> {
        let t = self.peek(0);
        Box::new(match &t.kind {
            Tok::Error(e) => (**e).clone(),
            Tok::Eof => ParseError::new(self.src, t.span, expected, "end of input"),
            _ => ParseError::new(self.src, t.span, expected, quote(t.span.text(self.src))),
        })
    }

    fn expect(&mut self, t: &Tok, expected: &str) -> PResult<Span> {
        if self.at(t) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Fails unless the current token can begin an expression.
    fn expect_expr(&self, expected: &str) -> PResult<()> {
        if self.starts_expr() {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Whether the current token can begin an expression.
    fn starts_expr(&self) -> bool {
        matches!(
            self.peek(0).kind,
            Tok::Ident(_)
                | Tok::This
                | Tok::True
                | Tok::False
                | Tok::Null
                | Tok::Int { .. }
                | Tok::Float(_)
                | Tok::Double(_)
                | Tok::Char(_)
                | Tok::Str(_)
                | Tok::Handle(_)
                | Tok::LParen
                | Tok::Bang
                | Tok::Minus
        )
    }

    /// Enters one level of nesting at the current token.
    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_NESTING {
            return Err(
                self.unexpected(&format!("an expression nested at most {MAX_NESTING} deep"))
            );
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Builds a node, assigning the next id; `at` is the token blamed if the
    /// tree grows too tall.
    #[inline(never)]
    fn node(&mut self, span: Span, kind: ExprKind, at: Span) -> PResult<Node> {
        let mut child = 0u16;
        kind.for_each_child(|c| {
            let h = self.heights.get(c.id.0 as usize).copied().unwrap_or(0);
            child = child.max(h);
        });
        let height = child.saturating_add(1);
        if height > MAX_TREE_HEIGHT {
            return Err(Box::new(ParseError::new(
                self.src,
                at,
                format!("an expression at most {MAX_TREE_HEIGHT} levels deep"),
                quote(at.text(self.src)),
            )));
        }
        let id = NodeId(self.next_id);
        self.next_id = self.next_id.saturating_add(1);
        self.heights.push(height);
        Ok(Box::new(Expr { id, span, kind }))
    }

    // The recursive spine: expr → unary → postfix → primary / member /
    // bracket / call → expr. Each keeps its frame small and hands bulky
    // work to non-recursive helpers.

    /// A full expression: operands joined by binary operators.
    fn expr(&mut self) -> PResult<Node> {
        let first = self.unary()?;
        if binop(&self.peek(0).kind).is_none() {
            return Ok(first);
        }
        self.binary_tail(first)
    }

    /// Operator precedence resolved with explicit stacks rather than one
    /// recursive call per precedence level. Equal precedence reduces first,
    /// which makes every operator left-associative.
    fn binary_tail(&mut self, first: Node) -> PResult<Node> {
        let mut operands = vec![first];
        let mut ops: Vec<(BinaryOp, Span)> = Vec::new();
        while let Some(op) = binop(&self.peek(0).kind) {
            while ops
                .last()
                .is_some_and(|(top, _)| top.precedence() >= op.precedence())
            {
                self.reduce(&mut operands, &mut ops)?;
            }
            ops.push((op, self.bump().span));
            operands.push(self.unary()?);
        }
        while !ops.is_empty() {
            self.reduce(&mut operands, &mut ops)?;
        }
        match (operands.pop(), operands.is_empty()) {
            (Some(e), true) => Ok(e),
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// Pops one operator and its two operands and pushes the combined node.
    fn reduce(&mut self, operands: &mut Vec<Node>, ops: &mut Vec<(BinaryOp, Span)>) -> PResult<()> {
        let (Some((op, op_span)), Some(rhs), Some(lhs)) =
            (ops.pop(), operands.pop(), operands.pop())
        else {
            return Err(self.unexpected("an expression"));
        };
        let span = lhs.span.to(rhs.span);
        let e = self.node(span, ExprKind::Binary { op, lhs, rhs }, op_span)?;
        operands.push(e);
        Ok(())
    }

    fn unary(&mut self) -> PResult<Node> {
        match self.peek(0).kind {
            Tok::Bang | Tok::Minus => self.prefixed(),
            _ => self.postfix(),
        }
    }

    /// Prefix operators, then their operand. The operators are collected in
    /// a loop, not by recursion; each still counts as a level of nesting.
    fn prefixed(&mut self) -> PResult<Node> {
        let mut prefix: Vec<(UnaryOp, Span)> = Vec::new();
        let operand = loop {
            let op = match self.peek(0).kind {
                Tok::Bang => UnaryOp::Not,
                Tok::Minus if self.negative_number_ahead() => break self.negative_literal()?,
                Tok::Minus => UnaryOp::Neg,
                _ => break self.postfix()?,
            };
            self.enter()?;
            prefix.push((op, self.bump().span));
        };
        self.wrap_prefix(prefix, operand)
    }

    /// `-` directly before a number with no postfix after it is a negative
    /// literal, which is the only way to write `-2147483648`.
    fn negative_number_ahead(&self) -> bool {
        matches!(
            self.peek(1).kind,
            Tok::Int { .. } | Tok::Float(_) | Tok::Double(_)
        ) && !matches!(self.peek(2).kind, Tok::Dot | Tok::LBracket)
    }

    fn negative_literal(&mut self) -> PResult<Node> {
        let minus = self.bump().span;
        let num = self.bump();
        let lit = self.number(&num, true)?;
        self.node(minus.to(num.span), ExprKind::Literal(lit), minus)
    }

    /// Applies collected prefix operators, innermost (last written) first.
    fn wrap_prefix(&mut self, mut prefix: Vec<(UnaryOp, Span)>, mut e: Node) -> PResult<Node> {
        while let Some((op, op_span)) = prefix.pop() {
            self.leave();
            let span = op_span.to(e.span);
            e = self.node(span, ExprKind::Unary { op, operand: e }, op_span)?;
        }
        Ok(e)
    }

    fn postfix(&mut self) -> PResult<Node> {
        let mut e = self.primary()?;
        loop {
            e = match self.peek(0).kind {
                Tok::Dot => self.member(e)?,
                Tok::LBracket => self.bracket(e)?,
                _ => return Ok(e),
            };
        }
    }

    /// `.name` or `.name(args)` after a non-path target.
    fn member(&mut self, target: Node) -> PResult<Node> {
        let dot = self.bump().span;
        let name = self.name("a name after `.`")?;
        if self.at(&Tok::LParen) {
            return self.call(Some(target), name);
        }
        let span = target.span.to(name.span);
        self.node(span, ExprKind::Field { target, name }, dot)
    }

    fn name(&mut self, expected: &str) -> PResult<Ident> {
        if !matches!(self.peek(0).kind, Tok::Ident(_)) {
            return Err(self.unexpected(expected));
        }
        let t = self.bump();
        match t.kind {
            Tok::Ident(name) => Ok(Ident { name, span: t.span }),
            _ => Err(self.unexpected(expected)),
        }
    }

    /// `name(args)` with the current token at `(`.
    fn call(&mut self, target: Option<Node>, name: Ident) -> PResult<Node> {
        self.enter()?;
        let open = self.bump().span;
        let args = self.args()?;
        let close = self.expect(&Tok::RParen, "`,` or `)`")?;
        self.leave();
        let start = target.as_ref().map_or(name.span, |t| t.span);
        self.node(start.to(close), ExprKind::Call { target, name, args }, open)
    }

    fn args(&mut self) -> PResult<Vec<Expr>> {
        let mut args = Vec::new();
        if self.at(&Tok::RParen) {
            return Ok(args);
        }
        self.expect_expr("an expression or `)`")?;
        loop {
            args.push(*self.expr()?);
            if !self.at(&Tok::Comma) {
                return Ok(args);
            }
            self.bump();
        }
    }

    /// `[index]`, `[from..to]` or `[?predicate]` after `target`.
    fn bracket(&mut self, target: Node) -> PResult<Node> {
        self.enter()?;
        let open = self.bump().span;
        let e = match self.peek(0).kind {
            Tok::Question => self.filter(target, open)?,
            Tok::DotDot => self.slice(target, None, open)?,
            _ => self.index_or_slice(target, open)?,
        };
        self.leave();
        Ok(e)
    }

    fn filter(&mut self, target: Node, open: Span) -> PResult<Node> {
        self.bump();
        self.expect_expr("a predicate after `[?`")?;
        let predicate = self.expr()?;
        if self.at(&Tok::DotDot) {
            return Err(self.unexpected(
                "`]` to close the filter (a filter cannot also slice; write `xs[?p][a..b]`)",
            ));
        }
        let close = self.expect(&Tok::RBracket, "`]` to close the filter")?;
        let span = target.span.to(close);
        self.node(span, ExprKind::Filter { target, predicate }, open)
    }

    fn index_or_slice(&mut self, target: Node, open: Span) -> PResult<Node> {
        self.expect_expr("an index, `..` slice or `?` filter after `[`")?;
        let first = self.expr()?;
        if self.at(&Tok::DotDot) {
            return self.slice(target, Some(first), open);
        }
        let close = self.expect(&Tok::RBracket, "`]`")?;
        let span = target.span.to(close);
        self.node(
            span,
            ExprKind::Index {
                target,
                index: first,
            },
            open,
        )
    }

    /// From the `..` of a slice to its `]`.
    fn slice(&mut self, target: Node, from: Option<Node>, open: Span) -> PResult<Node> {
        self.bump();
        let to = if self.at(&Tok::RBracket) {
            None
        } else {
            self.expect_expr("an upper bound or `]` after `..`")?;
            Some(self.expr()?)
        };
        let close = self.expect(&Tok::RBracket, "`]` to close the slice")?;
        let span = target.span.to(close);
        self.node(span, ExprKind::Slice { target, from, to }, open)
    }

    fn primary(&mut self) -> PResult<Node> {
        match self.peek(0).kind {
            Tok::Ident(ref w) if w == "new" && matches!(self.peek(1).kind, Tok::Ident(_)) => {
                self.new_instance()
            }
            Tok::Ident(ref w) if w == "frame" && self.frame_local_ahead() => self.frame_local(),
            Tok::Ident(_) => match self.path()? {
                Head::Done(e) => Ok(e),
                Head::Call(target, name) => self.call(target, name),
            },
            Tok::LParen => self.parenthesized(),
            _ => self.atom(),
        }
    }

    /// Whether `frame[N].name` (not a call) starts here.
    fn frame_local_ahead(&self) -> bool {
        matches!(self.peek(1).kind, Tok::LBracket)
            && matches!(
                self.peek(2).kind,
                Tok::Int {
                    long: false,
                    hex: false,
                    ..
                }
            )
            && matches!(self.peek(3).kind, Tok::RBracket)
            && matches!(self.peek(4).kind, Tok::Dot)
            && matches!(self.peek(5).kind, Tok::Ident(_))
            && !matches!(self.peek(6).kind, Tok::LParen)
    }

    /// `frame[N].name`, a caller frame's local.
    #[inline(never)]
    fn frame_local(&mut self) -> PResult<Node> {
        let start = self.bump().span;
        self.bump();
        let index = self.bump();
        let depth = match index.kind {
            Tok::Int { magnitude, .. } if magnitude <= u64::from(MAX_FRAME_DEPTH) => {
                magnitude as u32
            }
            _ => {
                return Err(Box::new(ParseError::new(
                    self.src,
                    index.span,
                    format!("a frame depth from 0 to {MAX_FRAME_DEPTH}"),
                    quote(index.span.text(self.src)),
                )));
            }
        };
        self.bump();
        self.bump();
        let name = self.name("a local's name after `frame[N].`")?;
        let span = start.to(name.span);
        self.node(span, ExprKind::FrameLocal { depth, name }, start)
    }

    /// `new a.b.C(args)`: `new` is a Java keyword, so no local or field
    /// can be named `new` and the word is read as the operator.
    #[inline(never)]
    fn new_instance(&mut self) -> PResult<Node> {
        let start = self.bump().span;
        let mut class = vec![self.name("a class name after `new`")?];
        while self.at(&Tok::Dot) {
            self.bump();
            class.push(self.name("a name after `.`")?);
        }
        if !self.at(&Tok::LParen) {
            return Err(self.unexpected("`(` after the class name"));
        }
        self.enter()?;
        let open = self.bump().span;
        let args = self.args()?;
        let close = self.expect(&Tok::RParen, "`,` or `)`")?;
        self.leave();
        self.node(start.to(close), ExprKind::New { class, args }, open)
    }

    /// `( expr )`; the parentheses make no node but widen the span.
    fn parenthesized(&mut self) -> PResult<Node> {
        self.enter()?;
        let open = self.bump().span;
        self.expect_expr("an expression after `(`")?;
        let mut inner = self.expr()?;
        let close = self.expect(&Tok::RParen, "`)`")?;
        self.leave();
        inner.span = open.to(close);
        Ok(inner)
    }

    /// A literal, `this` or a handle.
    #[inline(never)]
    fn atom(&mut self) -> PResult<Node> {
        let span = self.peek(0).span;
        let kind = match self.peek(0).kind {
            Tok::Int { .. }
            | Tok::Float(_)
            | Tok::Double(_)
            | Tok::Char(_)
            | Tok::Str(_)
            | Tok::True
            | Tok::False
            | Tok::Null
            | Tok::This
            | Tok::Handle(_) => {
                let t = self.bump();
                match t.kind {
                    Tok::Char(c) => ExprKind::Literal(Literal::Char(c)),
                    Tok::Str(s) => ExprKind::Literal(Literal::String(s)),
                    Tok::True => ExprKind::Literal(Literal::Bool(true)),
                    Tok::False => ExprKind::Literal(Literal::Bool(false)),
                    Tok::Null => ExprKind::Literal(Literal::Null),
                    Tok::This => ExprKind::This,
                    Tok::Handle(h) => ExprKind::Handle(h),
                    _ => ExprKind::Literal(self.number(&t, false)?),
                }
            }
            _ => return Err(self.unexpected("an expression")),
        };
        self.node(span, kind, span)
    }

    /// A leading identifier chain: a path, a pinned class, or a call on a
    /// path (or, unqualified, on `this`/the frame's class). Returns before
    /// parsing any call arguments so its frame is not on the recursion.
    #[inline(never)]
    fn path(&mut self) -> PResult<Head> {
        let first = self.name("a name")?;
        if self.at(&Tok::LParen) {
            return Ok(Head::Call(None, first));
        }
        let mut path = vec![first];
        loop {
            let dot_name =
                matches!(self.peek(0).kind, Tok::Dot) && matches!(self.peek(1).kind, Tok::Ident(_));
            if dot_name && self.peek(2).kind == Tok::LParen {
                self.bump();
                let name = self.name("a name after `.`")?;
                let target = self.path_node(path)?;
                return Ok(Head::Call(Some(target), name));
            }
            if dot_name {
                self.bump();
                path.push(self.name("a name after `.`")?);
                continue;
            }
            if let Tok::Handle(loader) = self.peek(0).kind {
                let h = self.bump().span;
                let start = path.first().map_or(h, |i| i.span);
                let e = self.node(start.to(h), ExprKind::PinnedClass { path, loader }, h)?;
                return Ok(Head::Done(e));
            }
            return Ok(Head::Done(self.path_node(path)?));
        }
    }

    fn path_node(&mut self, path: Vec<Ident>) -> PResult<Node> {
        let span = match (path.first(), path.last()) {
            (Some(a), Some(b)) => a.span.to(b.span),
            _ => self.peek(0).span,
        };
        self.node(span, ExprKind::Path(path), span)
    }

    /// The value of a numeric token, negated if `neg`, range-checked as Java does.
    #[inline(never)]
    fn number(&self, t: &Token, neg: bool) -> PResult<Literal> {
        let out_of_range = |expected: &str| {
            Box::new(ParseError::new(
                self.src,
                t.span,
                expected,
                quote(t.span.text(self.src)),
            ))
        };
        Ok(match t.kind {
            Tok::Float(v) => Literal::Float(if neg { -v } else { v }),
            Tok::Double(v) => Literal::Double(if neg { -v } else { v }),
            Tok::Int {
                magnitude,
                long: false,
                hex: true,
            } => {
                let v = u32::try_from(magnitude)
                    .map_err(|_| {
                        out_of_range("a hex int of at most 8 digits (add `L` for a long)")
                    })?
                    .cast_signed();
                Literal::Int(if neg { v.wrapping_neg() } else { v })
            }
            Tok::Int {
                magnitude,
                long: true,
                hex: true,
            } => {
                let v = magnitude.cast_signed();
                Literal::Long(if neg { v.wrapping_neg() } else { v })
            }
            Tok::Int {
                magnitude,
                long: false,
                hex: false,
            } => {
                let v = i64::try_from(magnitude)
                    .ok()
                    .map(|m| if neg { -m } else { m })
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| {
                        out_of_range("an int from -2147483648 to 2147483647 (add `L` for a long)")
                    })?;
                Literal::Int(v)
            }
            Tok::Int {
                magnitude,
                long: true,
                hex: false,
            } => {
                let v = i128::from(magnitude);
                let v = if neg { -v } else { v };
                Literal::Long(i64::try_from(v).map_err(|_| {
                    out_of_range("a long from -9223372036854775808L to 9223372036854775807L")
                })?)
            }
            _ => return Err(out_of_range("a number")),
        })
    }
}

#[cfg(any(test, feature = "parse-count"))]
pub mod count;
#[cfg(test)]
mod tests;
