//! The layout of a KDL document as the formatter sees it: nodes, their entries, and every
//! comment attached to the place it was written. Built from the lossless token stream of
//! [`super::lexer`]; it never decodes a value (the printer takes decoded values from `kdl`).
//! Comments in places the canonical layout has no room for are recorded as [`Refusal`]s.

use std::ops::Range;

use super::lexer::{Kind, Token};

/// A document or a children block.
#[derive(Debug, Default)]
pub(crate) struct Block {
    pub items: Vec<Item>,
    /// Comments on the line of the opening `{`.
    pub open_trailing: Vec<Range<usize>>,
}

#[derive(Debug)]
pub(crate) struct Item {
    pub kind: ItemKind,
    /// One or more blank lines were written before this item.
    pub blank_before: bool,
    /// Comments after the item, on its last line.
    pub trailing: Vec<Range<usize>>,
}

#[derive(Debug)]
pub(crate) enum ItemKind {
    Node(Node),
    /// A comment on its own line(s), or a slashdash-commented node: printed verbatim.
    Verbatim(Range<usize>),
}

#[derive(Debug)]
pub(crate) struct Node {
    /// Token index of the type annotation's string.
    pub ty: Option<usize>,
    pub groups: Vec<Group>,
    /// Comments and slashdashed children blocks after the last entry, before the children.
    pub tail: Vec<Range<usize>>,
    pub children: Option<Block>,
    /// Comments and slashdashed children blocks after the children block.
    pub after: Vec<Range<usize>>,
    /// The source range, from the type annotation (or name) to the last token of the node.
    pub range: Range<usize>,
}

/// An entry with the inline comments written just before it.
#[derive(Debug)]
pub(crate) struct Group {
    pub lead: Vec<Range<usize>>,
    pub entry: GroupEntry,
}

#[derive(Debug)]
pub(crate) enum GroupEntry {
    Entry(Entry),
    /// A slashdash-commented entry, verbatim; `is_prop` places it among the properties.
    Slashdashed {
        range: Range<usize>,
        is_prop: bool,
    },
}

impl GroupEntry {
    pub fn is_prop(&self) -> bool {
        match self {
            GroupEntry::Entry(e) => e.key.is_some(),
            GroupEntry::Slashdashed { is_prop, .. } => *is_prop,
        }
    }
}

/// Token indices of an argument or a property.
#[derive(Debug)]
pub(crate) struct Entry {
    pub key: Option<usize>,
    pub ty: Option<usize>,
    pub value: usize,
}

/// A comment the canonical layout cannot keep where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub range: Range<usize>,
    pub place: &'static str,
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: &'a [Token],
    pos: usize,
    /// Inside a slashdash-commented element, which is kept verbatim: nothing is refused.
    verbatim: usize,
    pub refusals: Vec<Refusal>,
    /// The verbatim range of every slashdash-commented element, in source order.
    pub slashdashed: Vec<Range<usize>>,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, toks: &'a [Token]) -> Self {
        Parser { src, toks, pos: 0, verbatim: 0, refusals: Vec::new(), slashdashed: Vec::new() }
    }

    pub fn document(&mut self) -> Block {
        self.block(false)
    }

    fn kind(&self) -> Option<Kind> {
        self.toks.get(self.pos).map(|t| t.kind)
    }

    fn tok(&self) -> Token {
        self.toks[self.pos]
    }

    /// The source range of a comment token (a line comment without trailing whitespace).
    fn comment_range(&self, t: Token) -> Range<usize> {
        let text = t.text(self.src);
        t.start..t.start + text.trim_end().len()
    }

    fn refuse(&mut self, t: Token, place: &'static str) {
        if self.verbatim == 0 {
            self.refusals.push(Refusal { range: self.comment_range(t), place });
        }
    }

    fn block(&mut self, in_braces: bool) -> Block {
        let mut block = Block::default();
        let mut newlines = 0;
        let mut at_open = in_braces;
        while let Some(kind) = self.kind() {
            match kind {
                Kind::Newline => {
                    newlines += 1;
                    at_open = false;
                    self.pos += 1;
                }
                Kind::LineComment | Kind::BlockComment => {
                    let r = self.comment_range(self.tok());
                    self.pos += 1;
                    if at_open {
                        block.open_trailing.push(r);
                    } else if let (0, Some(last)) = (newlines, block.items.last_mut()) {
                        last.trailing.push(r);
                    } else {
                        block.items.push(Item {
                            kind: ItemKind::Verbatim(r),
                            blank_before: newlines >= 2,
                            trailing: Vec::new(),
                        });
                        newlines = 0;
                    }
                }
                Kind::RBrace if in_braces => break,
                Kind::Slashdash => {
                    let start = self.tok().start;
                    self.pos += 1;
                    self.verbatim += 1;
                    self.skip_line_space();
                    let end = self.node().range.end;
                    self.verbatim -= 1;
                    self.slashdashed.push(start..end);
                    block.items.push(Item {
                        kind: ItemKind::Verbatim(start..end),
                        blank_before: newlines >= 2,
                        trailing: Vec::new(),
                    });
                    newlines = 0;
                    at_open = false;
                }
                Kind::LParen | Kind::Quoted | Kind::Raw | Kind::Ident => {
                    let node = self.node();
                    block.items.push(Item {
                        kind: ItemKind::Node(node),
                        blank_before: newlines >= 2,
                        trailing: Vec::new(),
                    });
                    newlines = 0;
                    at_open = false;
                }
                // Whitespace, line continuations and `;` terminators carry nothing.
                _ => self.pos += 1,
            }
        }
        block
    }

    /// After a slashdash: whitespace, newlines and comments, all part of the verbatim text.
    fn skip_line_space(&mut self) {
        while matches!(
            self.kind(),
            Some(Kind::Space | Kind::Newline | Kind::LineComment | Kind::BlockComment | Kind::Escline)
        ) {
            self.pos += 1;
        }
    }

    /// `\` then spaces, then an optional line comment (refused outside slashdash), then a newline.
    fn escline(&mut self) {
        self.pos += 1;
        while self.kind() == Some(Kind::Space) {
            self.pos += 1;
        }
        if self.kind() == Some(Kind::LineComment) {
            self.refuse(self.tok(), "after a line continuation `\\`");
            self.pos += 1;
        }
        if self.kind() == Some(Kind::Newline) {
            self.pos += 1;
        }
    }

    /// Whitespace where the canonical layout has none: a comment there is refused.
    fn skip_tight(&mut self, place: &'static str) {
        loop {
            match self.kind() {
                Some(Kind::Space) => self.pos += 1,
                Some(Kind::Escline) => self.escline(),
                Some(Kind::BlockComment) => {
                    self.refuse(self.tok(), place);
                    self.pos += 1;
                }
                _ => return,
            }
        }
    }

    /// `( string )`: returns the string's token index.
    fn ty(&mut self) -> usize {
        self.pos += 1; // (
        self.skip_tight("inside a type annotation");
        let ty = self.pos;
        self.pos += 1;
        self.skip_tight("inside a type annotation");
        if self.kind() == Some(Kind::RParen) {
            self.pos += 1;
        }
        ty
    }

    fn node(&mut self) -> Node {
        let start = self.toks.get(self.pos).map_or(self.src.len(), |t| t.start);
        let ty = if self.kind() == Some(Kind::LParen) {
            let ty = self.ty();
            self.skip_tight("between a type annotation and the node name");
            Some(ty)
        } else {
            None
        };
        let mut end = self.toks.get(self.pos).map_or(self.src.len(), |t| t.end);
        self.pos += 1;
        let mut node =
            Node { ty, groups: Vec::new(), tail: Vec::new(), children: None, after: Vec::new(), range: start..end };
        let mut pending = Vec::new();
        while let Some(kind) = self.kind() {
            match kind {
                Kind::Space => self.pos += 1,
                Kind::Escline => self.escline(),
                Kind::BlockComment => {
                    let t = self.tok();
                    pending.push(t.start..t.end);
                    end = t.end;
                    self.pos += 1;
                }
                Kind::Slashdash => {
                    let s = self.tok().start;
                    self.pos += 1;
                    self.verbatim += 1;
                    self.skip_line_space();
                    if self.kind() == Some(Kind::LBrace) {
                        end = self.children();
                        self.verbatim -= 1;
                        let place = if node.children.is_none() { &mut node.tail } else { &mut node.after };
                        place.append(&mut pending);
                        place.push(s..end);
                    } else {
                        let entry = self.entry();
                        self.verbatim -= 1;
                        end = self.toks[self.pos - 1].end;
                        let is_prop = entry.key.is_some();
                        node.groups.push(Group {
                            lead: std::mem::take(&mut pending),
                            entry: GroupEntry::Slashdashed { range: s..end, is_prop },
                        });
                    }
                    self.slashdashed.push(s..end);
                }
                Kind::LBrace if node.children.is_none() => {
                    node.tail.append(&mut pending);
                    self.pos += 1;
                    let block = self.block(true);
                    end = self.toks.get(self.pos).map_or(self.src.len(), |t| t.end);
                    self.pos += 1; // }
                    node.children = Some(block);
                }
                Kind::LParen | Kind::Quoted | Kind::Raw | Kind::Ident | Kind::Number | Kind::Keyword
                    if node.children.is_none() =>
                {
                    let entry = self.entry();
                    end = self.toks[self.pos - 1].end;
                    node.groups.push(Group { lead: std::mem::take(&mut pending), entry: GroupEntry::Entry(entry) });
                }
                _ => break,
            }
        }
        if node.children.is_none() {
            node.tail.append(&mut pending);
        } else {
            node.after.append(&mut pending);
        }
        node.range = start..end;
        node
    }

    /// A children block from its `{`; returns the end of its `}`.
    fn children(&mut self) -> usize {
        self.pos += 1;
        let _ = self.block(true);
        let end = self.toks.get(self.pos).map_or(self.src.len(), |t| t.end);
        self.pos += 1;
        end
    }

    /// An argument (`(type)value`) or a property (`key=(type)value`).
    fn entry(&mut self) -> Entry {
        let mut ty = None;
        if self.kind() == Some(Kind::LParen) {
            ty = Some(self.ty());
            self.skip_tight("between a type annotation and its value");
        }
        let value = self.pos.min(self.toks.len().saturating_sub(1));
        self.pos += 1;
        if ty.is_none() && self.toks[value].is_string() {
            let save = self.pos;
            let mut look = self.pos;
            while matches!(
                self.toks.get(look).map(|t| t.kind),
                Some(Kind::Space | Kind::Escline | Kind::BlockComment | Kind::LineComment | Kind::Newline)
            ) {
                // A newline only counts inside a line continuation.
                let k = self.toks[look].kind;
                if matches!(k, Kind::Newline | Kind::LineComment) && !self.after_escline(look) {
                    break;
                }
                look += 1;
            }
            if self.toks.get(look).map(|t| t.kind) == Some(Kind::Equals) {
                self.skip_tight("between a property's name and `=`");
                debug_assert_eq!(self.kind(), Some(Kind::Equals));
                self.pos = look.max(self.pos) + 1;
                self.skip_tight("between `=` and a property's value");
                let mut vty = None;
                if self.kind() == Some(Kind::LParen) {
                    vty = Some(self.ty());
                    self.skip_tight("between a type annotation and its value");
                }
                let v = self.pos.min(self.toks.len().saturating_sub(1));
                self.pos += 1;
                return Entry { key: Some(value), ty: vty, value: v };
            }
            self.pos = save;
        }
        Entry { key: None, ty, value }
    }

    /// Whether the token at `i` follows a `\` line continuation on the same line.
    fn after_escline(&self, i: usize) -> bool {
        let mut j = i;
        while j > 0 {
            j -= 1;
            match self.toks[j].kind {
                Kind::Space | Kind::LineComment => {}
                Kind::Escline => return true,
                _ => return false,
            }
        }
        false
    }
}
