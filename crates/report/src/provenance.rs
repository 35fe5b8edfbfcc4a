//! How a results folder was made: the command, its `--set` overrides, the program's version
//! and the machine, recorded in `summary.json` when the summary is written and printed at
//! the top of the reports, so that a figure can be traced to what produced it. Folders
//! written before this was recorded read as "not recorded".

use crate::summary::Summary;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// The command line that wrote the summary, one argument per entry.
    #[serde(default)]
    pub command: Vec<String>,
    /// Its `--set KEY=VALUE` overrides.
    #[serde(default)]
    pub set: Vec<String>,
    /// mptcp-lab's version (the crates' version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The git commit it was built from, if the build could tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default)]
    pub machine: Machine,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The kernel release (`uname -r`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Cores this process could use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
}

const NOT_RECORDED: &str = "not recorded";

/// The report's lines about how the results were made: (what, value), every one present,
/// "not recorded" where the folder does not say.
pub fn lines(s: &Summary) -> Vec<(&'static str, String)> {
    let p = s.provenance.clone().unwrap_or_default();
    let or_not = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.into());
    let command = (!p.command.is_empty()).then(|| shell_words(&p.command));
    let set = match (&s.provenance, p.set.is_empty()) {
        (None, _) => NOT_RECORDED.into(),
        (Some(_), true) => "none".into(),
        (Some(_), false) => p.set.join(" "),
    };
    let version = p.version.map(|v| match &p.commit {
        Some(c) => format!("{v} (commit {c})"),
        None => format!("{v} (commit unknown)"),
    });
    let m = p.machine;
    vec![
        ("command", or_not(command)),
        ("--set overrides", set),
        ("backend", s.backend.clone()),
        ("seeds", format!("{:?}", s.seeds)),
        ("mptcp-lab", or_not(version)),
        ("host", or_not(m.hostname)),
        ("kernel", or_not(m.kernel)),
        ("CPU", or_not(m.cpu)),
        ("cores", or_not(m.cores.map(|c| c.to_string()))),
    ]
}

/// Arguments joined for a shell: quoted where they hold anything but plain characters.
fn shell_words(args: &[String]) -> String {
    let plain = |a: &str| {
        !a.is_empty()
            && a.chars()
                .all(|c| c.is_alphanumeric() || "-_./=:,@%+#".contains(c))
    };
    args.iter()
        .map(|a| {
            if plain(a) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// With every parameter fixed by `--set`, the one variant's name says which values it ran
/// (`cc=fullycoupled`), not `default`; its folder stays `default`.
pub fn name_fixed_variant(s: &mut Summary) {
    let Some(p) = &s.provenance else { return };
    let keys: Vec<&str> = p
        .set
        .iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.trim()))
        .collect();
    for v in s.variants.iter_mut().filter(|v| v.name == "default") {
        let named: Vec<String> = keys
            .iter()
            .filter_map(|k| {
                let value = v.params.get(*k)?;
                let shown = match value {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Object(o) => match o.get("name").or_else(|| o.get("kind")) {
                        Some(serde_json::Value::String(n)) => n.clone(),
                        _ => value.to_string(),
                    },
                    other => other.to_string(),
                };
                Some(format!("{k}={shown}"))
            })
            .collect();
        if !named.is_empty() {
            v.name = named.join(",");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_from_before_says_not_recorded_and_a_new_one_says_what_it_ran() {
        let mut s = crate::compare::tests::summary("sim", &[]);
        let old = lines(&s);
        assert_eq!(old.len(), 9);
        for (what, value) in &old {
            if !matches!(*what, "backend" | "seeds") {
                assert_eq!(value, NOT_RECORDED, "{what}");
            }
        }
        s.variants[0].name = "default".into();
        s.variants[0]
            .params
            .insert("cc".into(), serde_json::json!("fullycoupled"));
        s.provenance = Some(Provenance {
            command: vec!["mptcp-lab".into(), "run".into()],
            set: vec!["cc=fullycoupled".into()],
            version: Some("0.1.0".into()),
            commit: None,
            machine: Machine::default(),
        });
        name_fixed_variant(&mut s);
        assert_eq!(s.variants[0].name, "cc=fullycoupled");
        let new: std::collections::BTreeMap<_, _> = lines(&s).into_iter().collect();
        assert_eq!(new["command"], "mptcp-lab run");
        assert_eq!(new["--set overrides"], "cc=fullycoupled");
        assert_eq!(new["mptcp-lab"], "0.1.0 (commit unknown)");
        assert_eq!(new["host"], NOT_RECORDED);
    }

    #[test]
    fn quoting_keeps_an_argument_whole() {
        let args = ["run", "a.toml", "--set", "mode={ name = \"x\" }"].map(String::from);
        assert_eq!(
            shell_words(&args),
            "run a.toml --set 'mode={ name = \"x\" }'"
        );
    }
}
