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
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
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

/// Adds "did you mean" to serde's "unknown field/variant `x`, expected one of `a`, `b`".
pub fn enrich_serde_message(message: &str) -> String {
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
