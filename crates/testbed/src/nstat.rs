//! A namespace's protocol counters, as `nstat -az` shows them: `/proc/net/netstat` and
//! `/proc/net/snmp` hold pairs of lines, a header of names (`TcpExt: SyncookiesSent ...`)
//! and a line of values. The kernel backend keeps those that say why a kernel run differs
//! from the simulator: MPTCP's handshakes and fallbacks, stale subflows, MPTCP-level
//! retransmissions and duplicates, and TCP's timeouts and retransmissions.

use anyhow::{Context, Result};
use std::collections::BTreeMap;

/// The counters kept, zero or not (a mean over seeds needs the zeros).
pub const KEPT: &[&str] = &[
    "MPTcpExtMPCapableSYNTX",
    "MPTcpExtMPCapableSYNRX",
    "MPTcpExtMPCapableFallbackACK",
    "MPTcpExtMPCapableFallbackSYNACK",
    "MPTcpExtMPCapableDataFallback",
    "MPTcpExtMPJoinSynTx",
    "MPTcpExtMPJoinSynRx",
    "MPTcpExtSubflowStale",
    "MPTcpExtSubflowRecover",
    "MPTcpExtMPTCPRetrans",
    "MPTcpExtDuplicateData",
    "MPTcpExtOFOQueue",
    "MPTcpExtRcvPruned",
    "MPTcpExtMPFailTx",
    "MPTcpExtInfiniteMapTx",
    "MPTcpExtDSSNotMatching",
    "TcpExtTCPTimeouts",
    "TcpExtTCPSynRetrans",
    "TcpExtTCPLossProbes",
    // Receivers: how often the delayed-ACK timer, not a second segment, sent the ACK.
    "TcpExtDelayedACKs",
    // Receivers: a full receive buffer. Windows advertised as zero and reopened (each
    // reopening is an ACK `__tcp_cleanup_rbuf()` sends after a read), and MPTCP subflows
    // whose window was raised to the connection's (`mptcp_set_rwin()`).
    "TcpExtTCPToZeroWindowAdv",
    "TcpExtTCPFromZeroWindowAdv",
    "MPTcpExtRcvWndShared",
    // Receivers: ACKs for out-of-order data held back by SACK compression.
    "TcpExtTCPAckCompressed",
    "TcpRetransSegs",
];

/// `Prefix` + `Name` -> value for every counter of a `/proc/net/netstat`-style text.
pub fn parse(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let (Some((prefix, names)), Some((_, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = v.parse() {
                out.insert(format!("{prefix}{n}"), v);
            }
        }
    }
    out
}

/// The counters in [`KEPT`] of the calling thread's namespace (those this kernel has).
pub fn read_kept() -> Result<BTreeMap<String, u64>> {
    let mut all = BTreeMap::new();
    // /proc/net is the process's (its first thread's) namespace: this thread's is here.
    for file in [
        "/proc/thread-self/net/netstat",
        "/proc/thread-self/net/snmp",
    ] {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
        all.extend(parse(&text));
    }
    Ok(all
        .into_iter()
        .filter(|(k, _)| KEPT.contains(&k.as_str()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_names_with_values_per_prefix() {
        let text = "TcpExt: SyncookiesSent TCPTimeouts\nTcpExt: 0 7\n\
                    MPTcpExt: MPCapableSYNRX MPCapableFallbackACK\nMPTcpExt: 5 1\n";
        let c = parse(text);
        assert_eq!(c["TcpExtTCPTimeouts"], 7);
        assert_eq!(c["MPTcpExtMPCapableFallbackACK"], 1);
        assert_eq!(c["TcpExtSyncookiesSent"], 0);
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn ignores_a_header_without_values_or_a_non_number() {
        let c = parse("Ip: Forwarding DefaultTTL\nIp: 1 x\nIcmp: InMsgs\n");
        assert_eq!(c.len(), 1);
        assert_eq!(c["IpForwarding"], 1);
    }

    #[test]
    fn reads_this_namespace() {
        // Every Linux has these files and TCP's counters; MPTCP's where it has MPTCP.
        let c = read_kept().expect("readable /proc/net");
        assert!(c.contains_key("TcpRetransSegs"), "{c:?}");
        assert!(c.keys().all(|k| KEPT.contains(&k.as_str())), "{c:?}");
    }
}
