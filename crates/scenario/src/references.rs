//! References to variant values, checked across the whole matrix (one variant alone cannot
//! tell): every `when` of an `[[expect]]` or `[[order]]` (or each value of a `when` list),
//! every value an `[[order]]` ranks and every `baseline` of a panel figure must name a value
//! some variant has, and the values of one parameter must have distinct names (the name is the variant's folder and what `when` matches). Otherwise a
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
                // A table is named by its `kind` unless it has a `name`.
                let how = if v.is_table() {
                    "give each table a distinct `name`"
                } else {
                    "give them distinct names"
                };
                problems.push((
                    vec![key("variants"), key(k), Seg::Index(i)],
                    format!(
                        "two values of `{k}` are both named `{name}`: each names a variant \
                         (and its results folder), so {how}"
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
    let mut empty_lists = Vec::new();
    let mut twice = Vec::new();
    for table in ["expect", "order"] {
        let Some(Value::Array(items)) = doc.get(table) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let Value::Table(t) = item else { continue };
            if let Some(Value::Table(when)) = t.get("when") {
                for (k, v) in when {
                    let path = vec![key(table), Seg::Index(i), key("when"), key(k)];
                    match v {
                        // A list names any of its values.
                        Value::Array(any) if any.is_empty() => empty_lists.push(path),
                        Value::Array(any) => {
                            for (j, v) in any.iter().enumerate() {
                                let mut path = path.clone();
                                path.push(Seg::Index(j));
                                value_exists(path, k, v);
                            }
                        }
                        v => value_exists(path, k, v),
                    }
                }
            }
            if let (Some(Value::String(param)), Some(Value::Array(ascending))) =
                (t.get("param"), t.get("ascending"))
            {
                for (j, v) in ascending.iter().enumerate() {
                    let path = vec![key(table), Seg::Index(i), key("ascending"), Seg::Index(j)];
                    let name = display_value(v);
                    // Ranked twice, a value would have to exceed itself.
                    if let Some(first) =
                        ascending[..j].iter().position(|w| display_value(w) == name)
                    {
                        twice.push((
                            path,
                            format!("`{name}` is ranked already (entry {first}): each value once"),
                        ));
                        continue;
                    }
                    value_exists(path, param, v);
                }
            }
        }
    }
    // A panel figure's baseline is a value of its `panels` parameter.
    if let Some(Value::Array(plots)) = doc.get("plot") {
        for (i, item) in plots.iter().enumerate() {
            let Value::Table(t) = item else { continue };
            if let (Some(Value::String(param)), Some(v)) = (t.get("panels"), t.get("baseline")) {
                value_exists(vec![key("plot"), Seg::Index(i), key("baseline")], param, v);
            }
        }
    }
    problems.extend(twice);
    for path in empty_lists {
        problems.push((
            path,
            "an empty list matches nothing: name one value or several".into(),
        ));
    }
    problems
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}
