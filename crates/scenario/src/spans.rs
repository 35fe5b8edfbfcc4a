//! Where each field stands in the file, so errors found after parsing can point at it.

use std::collections::HashMap;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Renders `[Key(link), Index(2), Key(rate)]` as `link[2].rate`.
pub fn render_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

pub struct SpanIndex {
    spans: HashMap<Vec<Seg>, Range<usize>>,
    line_starts: Vec<usize>,
}

impl SpanIndex {
    pub fn new(text: &str, root: &Spanned<DeTable<'_>>) -> Self {
        let mut spans = HashMap::new();
        walk_table(root.get_ref(), &mut Vec::new(), &mut spans);
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SpanIndex { spans, line_starts }
    }

    /// For a file that did not parse: line and column lookups only.
    pub fn lines_only(text: &str) -> Self {
        let root = Spanned::new(0..0, DeTable::default());
        Self::new(text, &root)
    }

    /// Line and column (1-based) of the deepest prefix of `path` present in the file.
    pub fn locate(&self, path: &[Seg]) -> (usize, usize) {
        (0..=path.len())
            .rev()
            .find_map(|n| self.spans.get(&path[..n]))
            .map(|r| self.line_col(r.start))
            .unwrap_or((1, 1))
    }

    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let col = offset - self.line_starts[line - 1] + 1;
        (line, col)
    }
}

fn walk_table(t: &DeTable<'_>, path: &mut Vec<Seg>, out: &mut HashMap<Vec<Seg>, Range<usize>>) {
    for (k, v) in t.iter() {
        path.push(Seg::Key(k.get_ref().to_string()));
        // Point at the key for tables (their value span may be the whole block), else the value.
        let span = if v.get_ref().is_table() {
            k.span()
        } else {
            v.span()
        };
        out.insert(path.clone(), span);
        walk_value(v, path, out);
        path.pop();
    }
}

fn walk_value(
    v: &Spanned<DeValue<'_>>,
    path: &mut Vec<Seg>,
    out: &mut HashMap<Vec<Seg>, Range<usize>>,
) {
    match v.get_ref() {
        DeValue::Table(t) => walk_table(t, path, out),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                out.insert(path.clone(), item.span());
                walk_value(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}
