//! References to variant values, checked across the whole matrix (one variant alone cannot
//! tell): every `when` of an `[[expect]]` or `[[order]]` (or each value of a `when` list),
//! every value an `[[order]]` ranks and every `baseline` of a panel figure must name a value
//! some variant has, and the values of one parameter must have distinct names (the name is the variant's folder and what `when` matches). Otherwise a
//! check or ordering would silently apply to nothing, or one variant's results would
//! overwrite another's. A `[[table]]` must place every parameter that varies, so that each
//! of its cells is one variant.

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
    // A table places every parameter that varies (a fixed one makes a row or column of one
    // value): one left out would put several variants in one cell.
    if let Some(Value::Array(tables)) = doc.get("table") {
        for (i, item) in tables.iter().enumerate() {
            let Value::Table(t) = item else { continue };
            let placed: Vec<&str> = ["rows", "columns"]
                .iter()
                .filter_map(|side| t.get(*side).and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            // A misspelt parameter (the per-variant check would say so too, but only once
            // these cross-variant problems are fixed).
            let all: Vec<&str> = matrix
                .keys()
                .chain(params.keys())
                .map(String::as_str)
                .collect();
            for side in ["rows", "columns"] {
                let Some(Value::Array(list)) = t.get(side) else {
                    continue;
                };
                for (k, p) in list.iter().enumerate() {
                    if let Some(p) = p.as_str().filter(|p| !all.contains(p)) {
                        problems.push((
                            vec![key("table"), Seg::Index(i), key(side), Seg::Index(k)],
                            format!("unknown parameter `{p}`; {}", suggestion(p, &all)),
                        ));
                    }
                }
            }
            let left: Vec<&str> = matrix
                .keys()
                .map(String::as_str)
                .filter(|k| !placed.contains(k))
                .collect();
            // Every label names something the table shows.
            if let Some(Value::Table(labels)) = t.get("labels") {
                let mut shown: Vec<String> = vec!["metric".into()];
                shown.extend(placed.iter().map(|p| p.to_string()));
                shown.extend(placed.iter().filter_map(|p| names(p)).flatten());
                if let Some(Value::Array(metrics)) = t.get("metrics") {
                    shown.extend(metrics.iter().filter_map(Value::as_str).map(String::from));
                }
                let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
                for k in labels.keys().filter(|k| !shown.contains(&k.as_str())) {
                    problems.push((
                        vec![key("table"), Seg::Index(i), key("labels"), key(k)],
                        format!(
                            "`{k}` is not in this table (a label names a parameter of its rows \
                             or columns, one of their values, one of its metrics, or `metric`); \
                             {}",
                            suggestion(k, &shown)
                        ),
                    ));
                }
            }
            if !left.is_empty() {
                problems.push((
                    vec![key("table"), Seg::Index(i)],
                    format!(
                        "`{}` varies but is in neither `rows` nor `columns`: each cell of a \
                         table must be one variant",
                        left.join("`, `")
                    ),
                ));
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
