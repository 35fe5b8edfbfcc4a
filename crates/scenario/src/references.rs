//! References to variant values, checked across the whole matrix (one variant alone cannot
//! tell): every `when` of an `[[expect]]` or `[[order]]` and every value an `[[order]]`
//! ranks must name a value some variant has, and the values of one parameter must have
//! distinct names (the name is the variant's folder and what `when` matches). Otherwise a
//! check or ordering would silently apply to nothing, or one variant's results would
//! overwrite another's.

use crate::error::suggestion;
use crate::load::display_value;
use crate::spans::Seg;
use std::collections::BTreeMap;
use toml::Value;

/// Every problem as (path in the file, message).
pub fn check(
    doc: &toml::Table,
    params: &BTreeMap<String, Value>,
    matrix: &BTreeMap<String, Vec<Value>>,
) -> Vec<(Vec<Seg>, String)> {
    let mut problems = Vec::new();
    for (k, values) in matrix {
        for (i, v) in values.iter().enumerate() {
            let name = display_value(v);
            if values[..i].iter().any(|w| display_value(w) == name) {
                problems.push((
                    vec![key("variants"), key(k), Seg::Index(i)],
                    format!(
                        "two values of `{k}` are both named `{name}`: each names a variant \
                         (and its results folder), so give them distinct names"
                    ),
                ));
            }
        }
    }
    // The names each parameter takes across the variants (a fixed one takes one).
    let names = |k: &str| -> Option<Vec<String>> {
        match (matrix.get(k), params.get(k)) {
            (Some(values), _) => Some(values.iter().map(display_value).collect()),
            (None, Some(v)) => Some(vec![display_value(v)]),
            (None, None) => None,
        }
    };
    let mut value_exists = |path: Vec<Seg>, k: &str, v: &Value| {
        // Unknown parameters are reported per variant, with did-you-mean.
        let Some(known) = names(k) else { return };
        let wanted = display_value(v);
        if known.contains(&wanted) {
            return;
        }
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        problems.push((
            path,
            format!(
                "no variant has `{k}` = `{wanted}`, so this would match nothing; {}",
                suggestion(&wanted, &known)
            ),
        ));
    };
    for table in ["expect", "order"] {
        let Some(Value::Array(items)) = doc.get(table) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let Value::Table(t) = item else { continue };
            if let Some(Value::Table(when)) = t.get("when") {
                for (k, v) in when {
                    let path = vec![key(table), Seg::Index(i), key("when"), key(k)];
                    value_exists(path, k, v);
                }
            }
            if let (Some(Value::String(param)), Some(Value::Array(ascending))) =
                (t.get("param"), t.get("ascending"))
            {
                for (j, v) in ascending.iter().enumerate() {
                    let path = vec![key(table), Seg::Index(i), key("ascending"), Seg::Index(j)];
                    value_exists(path, param, v);
                }
            }
        }
    }
    problems
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}
