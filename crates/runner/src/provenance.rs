//! What the results record about how they were made: this process's command line, the
//! `--set` overrides, the program's version and commit, and the machine.

use report::provenance::{Machine, Provenance};

/// The provenance of a run made now, in this process, with `set` overrides.
pub fn current(set: &[String]) -> Provenance {
    Provenance {
        command: std::env::args().collect(),
        set: set.to_vec(),
        version: Some(env!("CARGO_PKG_VERSION").to_string()),
        commit: option_env!("MPTCP_LAB_COMMIT").map(String::from),
        machine: machine(),
    }
}

fn machine() -> Machine {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Machine {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu: read("/proc/cpuinfo").and_then(|c| cpu_model(&c)),
        cores: std::thread::available_parallelism().ok().map(|n| n.get()),
    }
}

/// The first `model name` of `/proc/cpuinfo` (x86), else its `Model`/`Hardware` (ARM).
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_is_the_first_model_name() {
        let info = "processor\t: 0\nvendor_id\t: X\nmodel name\t: Some CPU @ 2.0GHz\n\nprocessor\t: 1\nmodel name\t: Some CPU @ 2.0GHz\n";
        assert_eq!(cpu_model(info).as_deref(), Some("Some CPU @ 2.0GHz"));
        assert_eq!(cpu_model("processor : 0\n"), None);
    }

    #[test]
    fn a_run_records_its_version_and_machine() {
        let p = current(&["cc=lia".to_string()]);
        assert_eq!(p.set, ["cc=lia"]);
        assert_eq!(p.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
        assert!(p.machine.cores.is_some_and(|c| c >= 1));
    }
}
