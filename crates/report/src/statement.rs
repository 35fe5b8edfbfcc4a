//! Whether an ordering's statement and what it compares agree: every value of the ranked
//! parameter that the statement names must be one the ordering ranks (a statement about
//! four algorithms that compares two would report a verdict on a claim it never tested).
//!
//! A value is named when its words (split at anything not a letter or digit, any case)
//! appear together in the statement, or run together (`fully coupled` names
//! `fullycoupled`, `500 ms` names `500ms`). Longer values are matched first and take their
//! words, so `weighted RTT` names `weighted-rtt` and not `rtt` as well. Values without a
//! letter (`10`, `1000`) are left out: numbers in a statement are too often something else
//! (`at least 2x`, `within 1 %`).

/// The values among `values` that `statement` names but `ranked` leaves out.
pub fn named_but_not_ranked(statement: &str, values: &[String], ranked: &[String]) -> Vec<String> {
    let mut words = tokens(statement);
    let mut by_length: Vec<&String> = values
        .iter()
        .filter(|v| v.chars().any(char::is_alphabetic))
        .collect();
    by_length.sort_by_key(|v| std::cmp::Reverse(tokens(v).len().max(squash(v).len())));
    let mut missing = Vec::new();
    for value in by_length {
        if take(&mut words, value) && !ranked.contains(value) {
            missing.push(value.clone());
        }
    }
    missing
}

/// Lower-case words of `s`.
fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn squash(s: &str) -> String {
    tokens(s).concat()
}

/// Whether `value` occurs in `words` (as its own words, or as consecutive words that run
/// together into it); the words it occupies are blanked so that no shorter value reuses
/// them.
fn take(words: &mut [String], value: &str) -> bool {
    let own = tokens(value);
    let joined = squash(value);
    for start in 0..words.len() {
        let mut run = String::new();
        for end in start..words.len() {
            if words[end].is_empty() {
                break;
            }
            run.push_str(&words[end]);
            let same_words = end + 1 - start == own.len() && words[start..=end] == own[..];
            if same_words || run == joined {
                words[start..=end].iter_mut().for_each(String::clear);
                return true;
            }
            if run.len() >= joined.len() {
                break;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::named_but_not_ranked;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_statement_naming_four_that_ranks_two_is_caught() {
        let values = v(&["fullycoupled", "olia", "lia", "balia"]);
        let missing = named_but_not_ranked(
            "Balia and LIA converge several times faster than OLIA and fully coupled",
            &values,
            &v(&["lia", "olia"]),
        );
        assert_eq!(missing, v(&["fullycoupled", "balia"]));
    }

    #[test]
    fn a_longer_value_takes_its_words_from_a_shorter_one() {
        let values = v(&["single-path", "rtt-variation", "rtt", "weighted-rtt"]);
        let ranked = v(&["weighted-rtt", "rtt-variation"]);
        let s = "weighted RTT balances the uplinks best: closer than RTT variation";
        assert!(named_but_not_ranked(s, &values, &ranked).is_empty());
        let s = "weighted RTT keeps the goodputs closer together than RTT selection";
        assert_eq!(named_but_not_ranked(s, &values, &ranked), v(&["rtt"]));
    }

    #[test]
    fn words_run_together_name_a_value_but_parts_of_words_do_not() {
        let values = v(&["10ms", "100ms", "500ms"]);
        let s = "a 500 ms difference loses more than a 10 ms one";
        assert!(named_but_not_ranked(s, &values, &v(&["500ms", "10ms"])).is_empty());
        assert_eq!(
            named_but_not_ranked(s, &values, &v(&["500ms"])),
            v(&["10ms"])
        );
        // "olia" is not "lia"; numbers alone are left out.
        let algos = v(&["lia", "olia", "10"]);
        assert!(named_but_not_ranked("OLIA within 10 %", &algos, &v(&["olia"])).is_empty());
    }
}
