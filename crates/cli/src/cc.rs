//! `mptcp-lab cc install|list|remove|show`: the eBPF congestion controls on this kernel.

use anyhow::Result;
use mptcp_bpf::registry::Installed;
use mptcp_bpf::{Algorithm, Registry, state};

pub fn install(names: &[String]) -> Result<bool> {
    let registry = Registry::from_env();
    for a in Algorithm::parse_list(names)? {
        let name = registry.name_of(a);
        match registry.install(a)? {
            Installed::Now { .. } => println!("{name}: installed"),
            Installed::Already => println!("{name}: already installed"),
        }
    }
    Ok(true)
}

pub fn remove(names: &[String], force: bool) -> Result<bool> {
    let registry = Registry::from_env();
    for a in Algorithm::parse_list(names)? {
        let name = registry.name_of(a);
        if registry.remove(a, force)? {
            println!("{name}: removed");
        } else {
            println!("{name}: not installed");
        }
    }
    Ok(true)
}

pub fn list(json: bool) -> Result<bool> {
    let registry = Registry::from_env();
    let statuses = registry.list();
    if json {
        let rows: Vec<_> = statuses
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name, "installed": s.installed, "registered": s.registered,
                    "sockets": s.sockets, "default": s.default,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(true);
    }
    if mptcp_bpf::system::require_root("list").is_err() {
        println!("(socket counts need root: they are read from the programs' pinned maps)");
    }
    println!("{:<16} {:<10} {:>8}  default", "name", "state", "sockets");
    for s in statuses {
        let state = match (s.installed, s.registered) {
            (true, true) => "installed",
            (true, false) => "stale pin",
            (false, true) => "foreign",
            (false, false) => "-",
        };
        let default = if s.default { "yes" } else { "" };
        println!("{:<16} {:<10} {:>8}  {default}", s.name, state, s.sockets);
    }
    Ok(true)
}

pub fn show(json: bool) -> Result<bool> {
    mptcp_bpf::system::require_root("show")?;
    let registry = Registry::from_env();
    let connections = state::connections(&registry);
    if json {
        println!("{}", serde_json::to_string_pretty(&connections)?);
        return Ok(true);
    }
    if connections.is_empty() {
        println!("no sockets are running an mptcp-lab congestion control");
    }
    for c in &connections {
        let first = &c.subflows[0];
        if c.token == 0 {
            println!("tcp  {}  {} -> {}", c.algorithm, first.local, first.remote);
        } else {
            println!(
                "mptcp token {:08x}  {}  {} subflow(s), {} coupled",
                c.token, c.algorithm, first.subflows, first.coupled
            );
        }
        for s in &c.subflows {
            print!(
                "  {} -> {}  cwnd {} ssthresh {} rtt {:.2}ms {}  rate {:.0} pkt/s  alpha {:.4}  +{:.6}/pkt",
                s.local,
                s.remote,
                s.cwnd,
                if s.ssthresh >= i32::MAX as u32 {
                    "-".to_string()
                } else {
                    s.ssthresh.to_string()
                },
                s.srtt_us as f64 / 1e3,
                s.ca_state,
                s.rate_pps,
                s.alpha,
                s.increase_per_packet,
            );
            if s.algorithm == "olia" {
                print!("  sets {{{}}}  l {}B", s.sets, s.inter_loss_bytes);
            }
            if s.repairs > 0 {
                print!("  repaired {}", s.repairs);
            }
            println!();
        }
    }
    Ok(true)
}
