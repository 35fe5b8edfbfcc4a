//! Errors that point at the file, line, column and field, and say what was expected.

use std::fmt;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub file: PathBuf,
    /// 1-based; 0 when the problem is not tied to a place in the file.
    pub line: usize,
    pub column: usize,
    /// The field path, e.g. `link[2].rate`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in one file (validation reports all of them, not just the first).
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

impl ScenarioErrors {
    pub fn single(e: ScenarioError) -> Self {
        ScenarioErrors(vec![e])
    }
}

/// The closest candidate by edit distance, when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        // `MPTCP` for `mptcp` is a typo however far apart the letters are.
        .map(|c| {
            let d = if c.eq_ignore_ascii_case(word) {
                0
            } else {
                strsim::damerau_levenshtein(word, c)
            };
            (d, c)
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// What to say after an unknown `word`: the likely correction, or else every candidate
/// (`did you mean `x`?`, `expected one of: a, b`).
pub fn suggestion(word: &str, candidates: &[&str]) -> String {
    match did_you_mean(word, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("expected one of: {}", candidates.join(", ")),
    }
}

/// Adds "did you mean" to serde's "unknown field/variant `x`, expected one of `a`, `b`",
/// and says what serde names by Rust type (`u64`, `struct DirectionSpec`) in the file's
/// terms.
pub fn enrich_serde_message(message: &str) -> String {
    // serde's words for a table without fields (`traffic = { kind = "bulk" }`).
    let message =
        &plain_types(message).replace(", there are no fields", ": this kind takes no fields");
    let Some(rest) = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))
    else {
        return message.to_string();
    };
    let Some(end) = rest.find('`') else {
        return message.to_string();
    };
    let word = &rest[..end];
    let candidates: Vec<&str> = rest[end + 1..].split('`').skip(1).step_by(2).collect();
    match did_you_mean(word, candidates) {
        Some(best) => format!("{message}; did you mean `{best}`?"),
        None => message.to_string(),
    }
}

/// serde's "invalid type: ..., expected X" with X a Rust type: the file's word for it.
fn plain_types(message: &str) -> String {
    let Some((head, expected)) = message.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let plain = match expected {
        "u64" => "a whole number, 0 or more".to_string(),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        "f64" => "a number".to_string(),
        "a sequence" => "a list `[...]`".to_string(),
        "a boolean" => "`true` or `false`".to_string(),
        "internally tagged enum QueueSpec" => {
            "a queue table such as `{ kind = \"droptail\", size = \"100pkt\" }`".to_string()
        }
        "internally tagged enum TrafficFields" => {
            "a traffic table such as `{ kind = \"bulk\" }`".to_string()
        }
        t if t.starts_with("internally tagged enum ") => "a table with a `kind`".to_string(),
        "struct DirectionSpec" => {
            "a table of overrides such as `{ rate = \"5Mbps\", loss = 0.01 }`".to_string()
        }
        t if t.starts_with("struct ") => "a table".to_string(),
        _ => return message.to_string(),
    };
    format!("{head}, expected {plain}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestion_for_a_typo() {
        let m =
            enrich_serde_message("unknown field `rat`, expected one of `name`, `rate`, `delay`");
        assert!(m.ends_with("did you mean `rate`?"), "{m}");
        let m = enrich_serde_message("unknown variant `droptial`, expected `droptail` or `red`");
        assert!(m.ends_with("did you mean `droptail`?"), "{m}");
        assert_eq!(
            enrich_serde_message("unknown field `zzzzzz`, expected `a`"),
            "unknown field `zzzzzz`, expected `a`"
        );
    }
}
