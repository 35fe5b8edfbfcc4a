//! The git commit the program is built from, for the results' provenance
//! (`MPTCP_LAB_COMMIT`): `git rev-parse`, or nothing where there is no git or no repository
//! (a source tarball), and the results then say the commit is unknown.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    // Rebuild when HEAD moves: a new commit, a checkout (HEAD, or the branch it points to).
    for dir in [
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ]
    .into_iter()
    .flatten()
    {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/refs/heads");
    }
    println!("cargo:rerun-if-env-changed=MPTCP_LAB_COMMIT");
    let commit = std::env::var("MPTCP_LAB_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    if let Some(commit) = commit {
        println!("cargo:rustc-env=MPTCP_LAB_COMMIT={commit}");
    }
}
