//! The program version that campaign tasks record: the package version, the git commit the
//! source was built from, and, for a tree with uncommitted changes, a hash of those changes,
//! so that two builds of different code never share a version (and so never share results).

use std::path::Path;
use std::process::Command;

/// `git ARGS` at the workspace root (paths in and out are relative to it).
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A short FNV-1a hash: enough to tell two sets of uncommitted changes apart.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn main() {
    let package = env!("CARGO_PKG_VERSION");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Every source file of the workspace feeds the version: rebuild it when any changes.
    for dir in ["crates", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    if let Some(git_dir) = git(&root, &["rev-parse", "--git-dir"]) {
        let git_dir = root.join(git_dir.trim());
        println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
        println!("cargo:rerun-if-changed={}", git_dir.join("index").display());
    }
    let version = match git(&root, &["rev-parse", "--short=12", "HEAD"]) {
        None => format!("{package} (not built from git)"),
        Some(commit) => {
            let commit = commit.trim();
            let diff = git(
                &root,
                &["diff", "HEAD", "--", "crates", "Cargo.toml", "Cargo.lock"],
            )
            .unwrap_or_default();
            let untracked = git(
                &root,
                &["ls-files", "--others", "--exclude-standard", "crates"],
            )
            .unwrap_or_default();
            let mut changes = diff.into_bytes();
            for file in untracked.lines() {
                changes.extend_from_slice(file.as_bytes());
                changes.extend(std::fs::read(root.join(file)).unwrap_or_default());
            }
            if changes.is_empty() {
                format!("{package}+git.{commit}")
            } else {
                format!(
                    "{package}+git.{commit}.changed.{:08x}",
                    fnv(&changes) as u32
                )
            }
        }
    };
    println!("cargo:rustc-env=MPTCP_LAB_VERSION={version}");
}
