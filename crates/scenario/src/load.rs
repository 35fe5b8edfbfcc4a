//! Reading a scenario file: TOML syntax, parameters and variants, shape, then validation.
//! Every error carries the file, line, column and field.

use crate::error::{ScenarioError, ScenarioErrors, did_you_mean, enrich_serde_message, suggestion};
use crate::model::Scenario;
use crate::spans::{Seg, SpanIndex, render_path};
use crate::spec::ScenarioSpec;
use crate::validate::{Context, validate};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Value;

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// `--set KEY=VALUE`: fixes a parameter (and removes it from the variant matrix).
    pub overrides: Vec<(String, String)>,
}

pub fn load_file(path: &Path, opts: &LoadOptions) -> Result<Vec<Scenario>, ScenarioErrors> {
    load_str(&read_file(path)?, path, opts)
}

/// A scenario file's text, or the error naming the file (for callers that keep the text,
/// such as a campaign that sends it to remote workers).
pub fn read_file(path: &Path) -> Result<String, ScenarioErrors> {
    std::fs::read_to_string(path).map_err(|e| {
        ScenarioErrors::single(ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: String::new(),
            message: format!("cannot read the file: {e}"),
        })
    })
}

/// Parses `text` (named `file` in errors) and returns every variant, validated.
pub fn load_str(
    text: &str,
    file: &Path,
    opts: &LoadOptions,
) -> Result<Vec<Scenario>, ScenarioErrors> {
    let err = |line, column, field: String, message: String| ScenarioError {
        file: file.to_path_buf(),
        line,
        column,
        field,
        message,
    };

    let root = toml::de::DeTable::parse(text).map_err(|e| {
        let spans = SpanIndex::lines_only(text);
        let (line, col) = e.span().map(|s| spans.line_col(s.start)).unwrap_or((0, 0));
        let mut message = e.message().trim().to_string();
        // toml names neither the key nor the table: the span covers the key.
        if message == "duplicate key"
            && let Some(span) = e.span()
            && let Some(key) = text.get(span.clone())
        {
            let key = key.trim();
            // A table header (`[node]` after `[[node]]`, `[scenario]` twice) is no key.
            let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
            message = if text[line_start..].trim_start().starts_with('[') {
                format!(
                    "duplicate table `{key}`: write a table once as [{key}], or each time as \
                     [[{key}]] for a list of tables"
                )
            } else {
                format!("duplicate key `{key}`: each key may appear once in a table")
            };
        }
        ScenarioErrors::single(err(
            line,
            col,
            String::new(),
            format!("TOML syntax: {message}"),
        ))
    })?;
    let spans = SpanIndex::new(text, &root);
    let at = |path: &[Seg], message: String| {
        let (line, col) = spans.locate(path);
        err(line, col, render_path(path), message)
    };
    let doc: toml::Table = toml::from_str(text)
        .map_err(|e| ScenarioErrors::single(err(0, 0, String::new(), e.message().to_string())))?;
    let shape = shape_problems(&doc);
    if !shape.is_empty() {
        return Err(ScenarioErrors(
            shape.into_iter().map(|(p, m)| at(&p, m)).collect(),
        ));
    }

    let mut params: BTreeMap<String, Value> = match doc.get("params") {
        Some(Value::Table(t)) => t.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(_) => {
            return Err(ScenarioErrors::single(at(
                &[Seg::Key("params".into())],
                "expected a table of parameter defaults".into(),
            )));
        }
        None => BTreeMap::new(),
    };
    let mut matrix: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    match doc.get("variants") {
        Some(Value::Table(t)) => {
            for (k, v) in t {
                let path = [Seg::Key("variants".into()), Seg::Key(k.clone())];
                match v {
                    Value::Array(items) if !items.is_empty() => {
                        matrix.insert(k.clone(), items.clone());
                    }
                    _ => {
                        return Err(ScenarioErrors::single(at(
                            &path,
                            "expected a non-empty array of values, e.g. [\"lia\", \"olia\"]".into(),
                        )));
                    }
                }
            }
        }
        Some(_) => {
            return Err(ScenarioErrors::single(at(
                &[Seg::Key("variants".into())],
                "expected a table: parameter = [values]".into(),
            )));
        }
        None => {}
    }
    // Against the file's own values: `--set` narrows the variants, and an expectation for
    // a variant left out is not a mistake in the file.
    let problems = crate::references::check(&doc, &params, &matrix);
    if !problems.is_empty() {
        return Err(ScenarioErrors(
            problems.into_iter().map(|(p, m)| at(&p, m)).collect(),
        ));
    }
    for (k, raw) in &opts.overrides {
        if !params.contains_key(k) && !matrix.contains_key(k) {
            // A parameter may have a default and variants: name it once.
            let known: Vec<&str> = params
                .keys()
                .chain(matrix.keys())
                .map(String::as_str)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let hint = did_you_mean(k, known.iter().copied())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_else(|| format!("; the file's parameters are: {}", known.join(", ")));
            return Err(ScenarioErrors::single(err(
                0,
                0,
                format!("--set {k}"),
                format!("unknown parameter `{k}`{hint}"),
            )));
        }
        // A value may be picked by the name the output gives it (`--set mode=mptcp-balia`
        // for a table named so).
        let named = matrix.get(k).map(Vec::as_slice).unwrap_or_default();
        let parsed = parse_override(raw);
        let value = match named.iter().find(|v| display_value(v) == *raw) {
            Some(v) => v.clone(),
            // Values that are tables are picked by name or given whole (`{ name = ... }`):
            // a bare string would not have their fields.
            None if !named.is_empty()
                && named.iter().all(Value::is_table)
                && !parsed.is_table() =>
            {
                let names: Vec<String> = named.iter().map(display_value).collect();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                return Err(ScenarioErrors::single(err(
                    0,
                    0,
                    format!("--set {k}"),
                    format!(
                        "`{k}` has no value named `{raw}`; {}",
                        suggestion(raw, &names)
                    ),
                )));
            }
            None => parsed,
        };
        matrix.remove(k);
        params.insert(k.clone(), value);
    }

    let mut scenarios = Vec::new();
    let mut errors: Vec<ScenarioError> = Vec::new();
    for combo in cartesian(&matrix) {
        let mut vparams = params.clone();
        let mut name = Vec::new();
        for (k, v) in &combo {
            vparams.insert(k.clone(), v.clone());
            name.push(format!("{k}={}", display_value(v)));
        }
        let mut body = Value::Table(doc.clone());
        if let Value::Table(t) = &mut body {
            t.remove("params");
            t.remove("variants");
        }
        let mut subst_errors = Vec::new();
        substitute(&mut body, &vparams, &mut Vec::new(), &mut subst_errors);
        if !subst_errors.is_empty() {
            errors.extend(subst_errors.into_iter().map(|(p, m)| at(&p, m)));
            continue;
        }
        let spec: ScenarioSpec = match serde_path_to_error::deserialize(body) {
            Ok(s) => s,
            Err(e) => {
                let mut path = serde_path(e.path());
                // toml appends "in `a.b`"; we name the field ourselves, with its line.
                let message = e.inner().to_string();
                let message = message.split("\nin `").next().unwrap_or_default().trim();
                if let Some(k) = quoted_key(&doc, &path, message) {
                    path.push(Seg::Key(k));
                }
                errors.push(at(&path, enrich_serde_message(message)));
                continue;
            }
        };
        let cx = Context {
            variant: name.join(","),
            params: vparams,
            file: file.to_path_buf(),
        };
        match validate(spec, cx) {
            Ok(s) => scenarios.push(s),
            Err(problems) => errors.extend(problems.into_iter().map(|p| at(&p.path, p.message))),
        }
    }
    if !errors.is_empty() {
        let mut seen = Vec::new();
        errors.retain(|e| {
            let k = (e.line, e.column, e.message.clone());
            if seen.contains(&k) {
                false
            } else {
                seen.push(k);
                true
            }
        });
        return Err(ScenarioErrors(errors));
    }
    Ok(scenarios)
}

/// `[[measure]]` for `[measure]` or `[flow]` for `[[flow]]`: serde would read the one as
/// the other's fields in order and blame a field the file never wrote.
fn shape_problems(doc: &toml::Table) -> Vec<(Vec<Seg>, String)> {
    const TABLES: &[&str] = &["scenario", "measure"];
    const LISTS: &[&str] = &[
        "node", "link", "flow", "event", "expect", "plot", "order", "derived", "table",
    ];
    let mut problems = Vec::new();
    for (k, v) in doc {
        let message = match v {
            Value::Array(_) if TABLES.contains(&k.as_str()) => {
                format!("[{k}] is one table: write [{k}], not [[{k}]] or a list")
            }
            Value::Table(_) if LISTS.contains(&k.as_str()) => {
                format!("[{k}] makes a list of tables: write [[{k}]] before each entry")
            }
            _ => continue,
        };
        problems.push((vec![Seg::Key(k.clone())], message));
    }
    problems
}

/// serde loses the path inside tagged enums (`queue`, `traffic`, `plot`) and drawn
/// `{ mean, spread }` tables, and names the table: the one key of it whose name the message
/// calls unknown, or whose string value it quotes, is where the mistake is.
fn quoted_key(doc: &toml::Table, path: &[Seg], message: &str) -> Option<String> {
    let mut v = doc.get(match path.first()? {
        Seg::Key(k) => k.as_str(),
        Seg::Index(_) => return None,
    })?;
    for seg in &path[1..] {
        v = match seg {
            Seg::Key(k) => v.as_table()?.get(k)?,
            Seg::Index(i) => v.as_array()?.get(*i)?,
        };
    }
    let table = v.as_table()?;
    // The list of expected fields after an unknown one may quote a value (`panels`).
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let field = rest.split('`').next()?;
        return table.contains_key(field).then(|| field.to_string());
    }
    let quoted =
        |s: &str| message.contains(&format!("`{s}`")) || message.contains(&format!("\"{s}\""));
    let mut hits = table.iter().filter(|(_, v)| v.as_str().is_some_and(quoted));
    let (k, _) = hits.next()?;
    hits.next().is_none().then(|| k.clone())
}

/// `--set n=5` gives an integer, `--set cc=lia` a string: TOML's own rules, strings unquoted.
fn parse_override(raw: &str) -> Value {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_string()))
}

/// How a parameter value is named in variant names and matched by `when`: strings bare,
/// tables by their `name` (or else `kind`) field, anything else as TOML.
pub fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Table(t) => match t.get("name").or_else(|| t.get("kind")) {
            Some(n) => display_value(n),
            None => v.to_string(),
        },
        other => other.to_string(),
    }
}

fn cartesian(matrix: &BTreeMap<String, Vec<Value>>) -> Vec<Vec<(String, Value)>> {
    let mut out = vec![Vec::new()];
    for (k, values) in matrix {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push((k.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

/// Replaces `"${name}"` by the parameter's value (keeping its type) and interpolates
/// `${name}` inside longer strings.
fn substitute(
    v: &mut Value,
    params: &BTreeMap<String, Value>,
    path: &mut Vec<Seg>,
    errs: &mut Vec<(Vec<Seg>, String)>,
) {
    match v {
        Value::String(s) if s.contains("${") => {
            let whole = s
                .strip_prefix("${")
                .and_then(|r| r.strip_suffix('}'))
                .filter(|n| !n.contains(['{', '}']));
            if let Some(name) = whole {
                match lookup(params, name) {
                    Some(val) => *v = val.clone(),
                    None => errs.push((path.clone(), unknown_param(name, params))),
                }
                return;
            }
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("${") {
                out.push_str(&rest[..i]);
                let Some(j) = rest[i..].find('}') else {
                    errs.push((path.clone(), format!("unclosed `${{` in `{s}`")));
                    return;
                };
                let name = &rest[i + 2..i + j];
                match lookup(params, name) {
                    Some(val) => out.push_str(&display_value(val)),
                    None => errs.push((path.clone(), unknown_param(name, params))),
                }
                rest = &rest[i + j + 1..];
            }
            out.push_str(rest);
            *s = out;
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(Seg::Index(i));
                substitute(item, params, path, errs);
                path.pop();
            }
        }
        Value::Table(t) => {
            for (k, item) in t.iter_mut() {
                path.push(Seg::Key(k.clone()));
                substitute(item, params, path, errs);
                path.pop();
            }
        }
        _ => {}
    }
}

/// `name` or `name.field` (a field of a table-valued parameter).
fn lookup<'a>(params: &'a BTreeMap<String, Value>, name: &str) -> Option<&'a Value> {
    match name.split_once('.') {
        Some((table, field)) => params.get(table)?.as_table()?.get(field),
        None => params.get(name),
    }
}

fn unknown_param(name: &str, params: &BTreeMap<String, Value>) -> String {
    if let Some((table, field)) = name.split_once('.')
        && let Some(value) = params.get(table)
    {
        let Some(t) = value.as_table() else {
            return format!(
                "parameter `{table}` is `{}`, not a table, so it has no field `{field}`",
                display_value(value)
            );
        };
        let fields: Vec<&str> = t.keys().map(String::as_str).collect();
        return format!(
            "parameter `{table}` has no field `{field}`; {}",
            suggestion(field, &fields)
        );
    }
    let name = name.split_once('.').map_or(name, |(t, _)| t);
    let known: Vec<&str> = params.keys().map(String::as_str).collect();
    match did_you_mean(name, known.iter().copied()) {
        Some(s) => format!("unknown parameter `{name}`; did you mean `{s}`?"),
        None => format!("unknown parameter `{name}`: declare it under [params] or [variants]"),
    }
}

fn serde_path(p: &serde_path_to_error::Path) -> Vec<Seg> {
    use serde_path_to_error::Segment;
    p.iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(Seg::Index(*index)),
            Segment::Map { key } => Some(Seg::Key(key.clone())),
            Segment::Enum { variant } => Some(Seg::Key(variant.clone())),
            Segment::Unknown => None,
        })
        .collect()
}

/// The scenario files under a folder, sorted, for commands that take a directory.
pub fn scenario_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    Ok(v)
}
