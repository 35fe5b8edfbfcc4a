//! `matcp status`: the selector's configuration and each path's statistics, from the pinned
//! state map.

use anyhow::Result;
use mptcp_bpf::matcp::{Matcp, State};
use std::time::Duration;

pub fn show(matcp: &Matcp, json: bool, watch: Option<f64>) -> Result<bool> {
    loop {
        let state = matcp.read()?;
        if json {
            println!("{}", to_json(&state));
        } else {
            if watch.is_some() {
                // Clear the terminal and go home, as `watch` does.
                print!("\x1b[2J\x1b[H");
            }
            print_table(&state);
        }
        match watch {
            Some(s) if s > 0.0 => std::thread::sleep(Duration::from_secs_f64(s)),
            _ => return Ok(true),
        }
    }
}

pub fn to_json(state: &State) -> serde_json::Value {
    let paths: Vec<_> = state
        .paths()
        .iter()
        .enumerate()
        .map(|(i, addr)| {
            let p = &state.sel.path[i];
            let s = &state.stats[i];
            serde_json::json!({
                "addr": addr.to_string(),
                "addr4": addr.v4.map(|a| a.to_string()),
                "addr6": addr.v6.map(|a| a.to_string()),
                "choices": s.choices,
                "connections": s.connections,
                "measure": p.measure(),
                "rtt_ns": p.rtt_ns,
                "min_rtt_ns": p.min_rtt_ns,
                "retransmits": s.retransmits,
                "segments_sent": s.segments_sent,
                "timeouts": s.timeouts,
                "last_srtt_us": s.last_srtt_us,
                "last_rttvar_us": s.last_rttvar_us,
            })
        })
        .collect();
    serde_json::json!({
        "selector": state.selector().map(|s| s.name()),
        "refresh": state.refresh(),
        "in_a_row": state.sel.in_a_row,
        "bind_errors": state.bind_errors,
        "paths": paths,
    })
}

fn print_table(state: &State) {
    let selector = state.selector().map_or("unknown", |s| s.name());
    let refresh = state
        .refresh()
        .map_or("never".to_string(), |r| format!("after {r} in a row"));
    println!(
        "selector {selector}, refresh {refresh}, last path chosen {} time(s) in a row, {} bind error(s)",
        state.sel.in_a_row, state.bind_errors
    );
    let paths = state.paths();
    // IPv6 addresses are up to 39 characters, a pair of both 55.
    let width = (paths.iter().map(|p| p.to_string().len()))
        .max()
        .unwrap_or(0)
        .max(15);
    println!(
        "{:>4} {:<width$} {:>9} {:>9} {:>12} {:>10} {:>10} {:>10} {:>9} {:>8}",
        "path",
        "address",
        "choices",
        "ended",
        "measure",
        "rtt ms",
        "min ms",
        "rttvar ms",
        "retrans%",
        "timeouts"
    );
    let ms = |ns: u64| ns as f64 / 1e6;
    for (i, addr) in paths.iter().enumerate() {
        let p = &state.sel.path[i];
        let s = &state.stats[i];
        let measure = p.measure().map_or("-".to_string(), |m| format!("{m:.6}"));
        let retrans = if s.segments_sent > 0 {
            100.0 * s.retransmits as f64 / s.segments_sent as f64
        } else {
            0.0
        };
        println!(
            "{i:>4} {:<width$} {:>9} {:>9} {measure:>12} {:>10.3} {:>10.3} {:>10.3} {retrans:>9.2} {:>8}",
            addr.to_string(),
            s.choices,
            s.connections,
            ms(p.rtt_ns),
            ms(p.min_rtt_ns),
            s.last_rttvar_us as f64 / 1e3,
            s.timeouts
        );
    }
}
