//! Captures of the simulator's links (`--pcap`): what they hold agrees with the links'
//! own counts, the same seed writes the same bytes, and Wireshark's dissector reads them
//! as the TCP and MPTCP segments the simulator sent.

use scenario::{LoadOptions, Scenario, load_str};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A TCP and an MPTCP (two ndiffports subflows) file transfer from `a` through `r` to `b`,
/// over a 10-packet queue that drops: both finish well before the run ends, so every packet
/// that entered the queue has left it or been dropped by then.
const SCENARIO: &str = r#"
[scenario]
name = "capture"
duration = "12s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "b"
kind = "host"
[[link]]
name = "up"
a = "a"
b = "r"
rate = "1Gbps"
delay = "2ms"
[[link]]
name = "access"
a = "r"
b = "b"
rate = "8Mbps"
delay = "10ms"
queue = { kind = "droptail", size = "10pkt" }
[[flow]]
name = "tcp"
from = "a"
to = "b"
traffic = { kind = "file", size = "2MB" }
[[flow]]
name = "mptcp"
protocol = "mptcp"
path_manager = "ndiffports"
subflows = 2
cc = "lia"
from = "a"
to = "b"
traffic = { kind = "file", size = "2MB" }
"#;

fn scenario() -> Scenario {
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    load_str(SCENARIO, Path::new("capture.toml"), &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

/// Runs seed 1 capturing both links into `dir`; the result and the two files.
fn run(dir: &Path) -> (scenario::results::RunResult, PathBuf, PathBuf) {
    let sc = scenario();
    let links = vec!["up".to_string(), "access".to_string()];
    let files = net::capture::capture_files(&sc, &links, dir, 1).unwrap();
    let result = sim::run_capturing(&sc, 1, &files, |_| {}).unwrap();
    (result, files[0].1.clone(), files[1].1.clone())
}

/// What the test reads of a captured IPv4/TCP packet.
#[derive(Debug)]
struct Segment {
    at_ns: u128,
    dst: [u8; 4],
    src_port: u16,
    dst_port: u16,
    seq: u32,
    flags: u8,
    payload: u32,
    options: Vec<u8>,
    wire_len: u32,
}

fn read(path: &Path) -> Vec<Segment> {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = pcap_file::pcap::PcapReader::new(file).unwrap();
    let mut out = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = packet.unwrap();
        let d = &packet.data;
        assert_eq!(d[0], 0x45, "IPv4 without options");
        assert_eq!(d[9], 6, "TCP");
        let total = u16::from_be_bytes([d[2], d[3]]) as u32;
        let tcp = &d[20..];
        let header = (tcp[12] >> 4) as u32 * 4;
        assert_eq!(d.len() as u32, 20 + header, "headers only");
        out.push(Segment {
            at_ns: packet.timestamp.as_nanos(),
            dst: d[16..20].try_into().unwrap(),
            src_port: u16::from_be_bytes([tcp[0], tcp[1]]),
            dst_port: u16::from_be_bytes([tcp[2], tcp[3]]),
            seq: u32::from_be_bytes(tcp[4..8].try_into().unwrap()),
            flags: tcp[13],
            payload: total - 20 - header,
            options: tcp[20..header as usize].to_vec(),
            wire_len: packet.orig_len,
        });
    }
    out
}

/// Whether a TCP header's options hold an MPTCP option (kind 30).
fn has_mptcp(options: &[u8]) -> bool {
    let mut i = 0;
    while i < options.len() {
        match options[i] {
            0 => return false,
            1 => i += 1,
            kind => {
                if kind == 30 {
                    return true;
                }
                i += options[i + 1].max(2) as usize;
            }
        }
    }
    false
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mptcp-lab-capture-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_queue_s_drops_are_what_went_in_and_did_not_come_out() {
    let dir = temp_dir("drops");
    let (result, up, access) = run(&dir);
    let (into, out_of) = (read(&up), read(&access));
    assert_eq!(result.metrics["group.tcp.completed"], 1.0);
    assert_eq!(result.metrics["group.mptcp.completed"], 1.0);
    // b's address on the access link: 10.0.1.2 (link 1, side b).
    let to_b = |s: &&Segment| s.dst == [10, 0, 1, 2];
    let sent_in = into.iter().filter(to_b).count();
    let came_out = out_of.iter().filter(to_b).count();
    let drops = result.metrics["link.access.ab.drops"];
    assert!(drops > 10.0, "the queue should drop: {drops}");
    assert_eq!((sent_in - came_out) as f64, drops);
    // Each capture is in time order, every packet at or after the one before.
    for capture in [&into, &out_of] {
        assert!(capture.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    }
    // The TCP connection and the MPTCP connection's two subflows: three client ports,
    // the MPTCP ones carrying MPTCP options on every segment, the TCP one on none.
    let mut ports: HashMap<u16, BTreeSet<bool>> = HashMap::new();
    for s in into.iter().filter(to_b) {
        ports
            .entry(s.src_port)
            .or_default()
            .insert(has_mptcp(&s.options));
    }
    assert_eq!(ports.len(), 3, "{ports:?}");
    let kinds: Vec<_> = ports
        .values()
        .map(|k| k.iter().copied().collect::<Vec<_>>())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == [true]).count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == [false]).count(), 1);
    // Servers listen where the kernel backend's do: flow i on 5001 + i, the extra
    // ndiffports subflow on 4001.
    let servers: BTreeSet<u16> = into.iter().filter(to_b).map(|s| s.dst_port).collect();
    assert_eq!(servers, BTreeSet::from([4001, 5001, 5002]));
    // Full segments carry 1460 bytes at sequence numbers 1460 apart; the last may be short.
    let data: Vec<&Segment> = into.iter().filter(to_b).filter(|s| s.payload > 0).collect();
    assert!(
        data.iter()
            .all(|s| s.payload <= 1460 && (s.seq - 1) % 1460 == 0)
    );
    assert!(
        data.iter()
            .all(|s| s.flags & 0x10 != 0
                && s.wire_len == 20 + 20 + s.options.len() as u32 + s.payload)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_seed_writes_the_same_capture() {
    let (one, two) = (temp_dir("same-1"), temp_dir("same-2"));
    let (captured, up1, access1) = run(&one);
    let (_, up2, access2) = run(&two);
    assert_eq!(std::fs::read(&up1).unwrap(), std::fs::read(&up2).unwrap());
    assert_eq!(
        std::fs::read(&access1).unwrap(),
        std::fs::read(&access2).unwrap()
    );
    // And capturing changes nothing in the run itself.
    let plain = sim::run(&scenario(), 1, |_| {});
    assert_eq!(plain.metrics, captured.metrics);
    std::fs::remove_dir_all(&one).unwrap();
    std::fs::remove_dir_all(&two).unwrap();
}

/// tshark's fields of every packet of `pcap`, one line each.
fn tshark(pcap: &Path, fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-o", "ip.check_checksum:TRUE", "-r"]).arg(pcap);
    cmd.args(["-T", "fields", "-E", "occurrence=f"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: tshark not found ({e}); scripts/setup installs it");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect(),
    )
}

#[test]
fn wireshark_reads_the_segments_and_their_mptcp_mappings() {
    let dir = temp_dir("tshark");
    let (_, up, _) = run(&dir);
    let fields = [
        "_ws.malformed",
        "ip.checksum.status",
        "tcp.len",
        "tcp.seq",
        "tcp.options.mptcp.subtype",
        "tcp.options.mptcp.datalvllen",
        "tcp.options.mptcp.subflowseqno",
        "tcp.options.mptcp.rawdataseqno",
        "tcp.flags.syn",
        "tcp.analysis.zero_window",
        "tcp.analysis.ack_lost_segment",
    ];
    let Some(rows) = tshark(&up, &fields) else {
        return;
    };
    let ours = read(&up);
    assert_eq!(rows.len(), ours.len());
    let mut mappings = 0;
    for (row, seg) in rows.iter().zip(&ours) {
        assert_eq!(row[0], "", "malformed: {row:?}");
        assert_eq!(row[1], "1", "IPv4 checksum good: {row:?}");
        assert_eq!(row[2].parse::<u32>().unwrap(), seg.payload, "{row:?}");
        // Every segment offers a window, and no ACK of the TCP connection acknowledges
        // data this capture (before the queue: it holds every segment sent) has not seen.
        assert_eq!(row[9], "", "zero window: {row:?}");
        if !has_mptcp(&seg.options) {
            assert_eq!(row[10], "", "ACK of unseen data: {row:?}");
        }
        if !row[5].is_empty() {
            // A DSS mapping: its length is the segment's, and its subflow sequence number
            // the segment's own (relative to the SYN, as RFC 8684 3.3.1 has it).
            mappings += 1;
            assert_eq!(row[4], "2", "{row:?}");
            assert_eq!(row[5].parse::<u32>().unwrap(), seg.payload, "{row:?}");
            assert_eq!(row[6], row[3], "{row:?}");
            let dsn: u64 = row[7].parse().unwrap();
            assert_eq!((dsn - 1) % 1460, 0, "{row:?}");
        }
    }
    // Every data segment of the MPTCP connection carries its mapping.
    let mptcp_data = ours
        .iter()
        .filter(|s| s.payload > 0 && has_mptcp(&s.options))
        .count();
    assert_eq!(mappings, mptcp_data);
    assert!(mappings > 1000);
    // The handshakes: MP_CAPABLE on one SYN, MP_JOIN on the other subflow's.
    let syn_subtypes: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r[8] == "1" && !r[4].is_empty())
        .map(|r| r[4].as_str())
        .collect();
    assert_eq!(syn_subtypes, BTreeSet::from(["0", "1"]));
    std::fs::remove_dir_all(&dir).unwrap();
}
