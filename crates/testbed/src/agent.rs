//! Traffic on real sockets: a bulk sender and a counting receiver, TCP or MPTCP. The
//! kernel tests and `cc bench` run them inside network namespaces (`ip netns exec
//! mptcp-lab agent ...`).
//!
//! Both return one JSON document (the agent command prints it). Times are CLOCK_MONOTONIC seconds,
//! which all namespaces share, so a sender's and a receiver's samples line up.

use anyhow::{Context, Result, bail};
use serde_json::json;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// IPPROTO_MPTCP from linux/in.h.
const IPPROTO_MPTCP: i32 = 262;

/// What a sender does.
#[derive(Clone, Debug)]
pub struct SendOptions {
    pub to: SocketAddr,
    pub mptcp: bool,
    /// Congestion control (TCP_CONGESTION); on an MPTCP socket the kernel applies it to
    /// every subflow.
    pub cc: Option<String>,
    pub seconds: f64,
    /// Local address to send from.
    pub bind: Option<std::net::IpAddr>,
    /// TCP_INFO sampling period in milliseconds (0: none).
    pub trace_ms: u64,
}

/// A TCP or MPTCP (IPPROTO_MPTCP) stream socket for `addr`'s family.
pub fn socket_for(addr: &SocketAddr, mptcp: bool) -> Result<Socket> {
    let protocol = if mptcp {
        Protocol::from(IPPROTO_MPTCP)
    } else {
        Protocol::TCP
    };
    Socket::new(Domain::for_address(*addr), Type::STREAM, Some(protocol)).with_context(|| {
        if mptcp {
            "creating an MPTCP socket (is net.mptcp.enabled 1?)".to_string()
        } else {
            "creating a TCP socket".to_string()
        }
    })
}

/// A socket timeout (the agents wake up to sample) or a signal: try again.
pub(crate) fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{Interrupted, TimedOut, WouldBlock};
    matches!(e.kind(), WouldBlock | TimedOut | Interrupted)
}

pub fn monotonic_s() -> f64 {
    crate::emu::clock::monotonic_ns() as f64 / 1e9
}

/// Accepts `connections` connections and counts what arrives on each, sampled every
/// `period`, until each ends.
pub fn recv(
    listen: SocketAddr,
    mptcp: bool,
    connections: usize,
    period: Duration,
) -> Result<serde_json::Value> {
    let socket = socket_for(&listen, mptcp)?;
    socket.set_reuse_address(true)?;
    socket
        .bind(&SockAddr::from(listen))
        .with_context(|| format!("binding {listen}"))?;
    socket.listen(128)?;
    let listener: TcpListener = socket.into();
    let mut workers = Vec::new();
    for _ in 0..connections {
        let (stream, peer) = listener.accept()?;
        workers.push(std::thread::spawn(move || {
            count(stream, peer, mptcp, period)
        }));
    }
    let results: Vec<serde_json::Value> = workers
        .into_iter()
        .map(|w| {
            w.join()
                .unwrap_or_else(|_| json!({"error": "receiver thread panicked"}))
        })
        .collect();
    Ok(json!({ "connections": results }))
}

/// Reads to EOF, sampling (time, cumulative bytes).
fn count(
    mut stream: TcpStream,
    peer: SocketAddr,
    mptcp: bool,
    period: Duration,
) -> serde_json::Value {
    let mut buf = vec![0u8; 1 << 18];
    let mut total: u64 = 0;
    let mut most_subflows = 0u32;
    let mut samples = vec![(monotonic_s(), 0u64)];
    let mut next = Instant::now() + period;
    let _ = stream.set_read_timeout(Some(period));
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if is_transient(&e) => {}
            Err(_) => break,
        }
        if Instant::now() >= next {
            samples.push((monotonic_s(), total));
            if mptcp {
                let now = crate::sockinfo::mptcp_subflows(stream.as_raw_fd())
                    .subflows
                    .len();
                most_subflows = most_subflows.max(now as u32);
            }
            next += period;
        }
    }
    samples.push((monotonic_s(), total));
    json!({
        "peer": peer.to_string(),
        "bytes": total,
        "samples": samples,
        "most_subflows": most_subflows,
    })
}

/// Connects and sends as fast as the connection takes it for `seconds`, then waits for
/// the receiver to close.
pub fn send(o: &SendOptions) -> Result<serde_json::Value> {
    let (to, mptcp, cc, seconds, bind, trace_ms) = (
        o.to,
        o.mptcp,
        o.cc.as_deref(),
        o.seconds,
        o.bind,
        o.trace_ms,
    );
    let socket = socket_for(&to, mptcp)?;
    if let Some(cc) = cc {
        socket.set_tcp_congestion(cc.as_bytes()).with_context(|| {
            format!("TCP_CONGESTION {cc} (is it installed? `mptcp-lab cc list`)")
        })?;
    }
    if let Some(ip) = bind {
        socket
            .bind(&SockAddr::from(SocketAddr::new(ip, 0)))
            .with_context(|| format!("binding {ip}"))?;
    }
    // The receiver may still be starting: retry for a few seconds.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match socket.connect(&SockAddr::from(to)) {
            Ok(()) => break,
            Err(e) if Instant::now() < deadline && e.raw_os_error() == Some(libc::ECONNREFUSED) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e).with_context(|| format!("connecting to {to}")),
        }
    }
    let used = socket
        .tcp_congestion()
        .map(|b| {
            String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .to_string()
        })
        .unwrap_or_default();
    if let Some(cc) = cc
        && used != cc
    {
        bail!("asked for congestion control {cc}, the socket runs {used}");
    }
    let mut stream: TcpStream = socket.into();
    let chunk = vec![0x5au8; 1 << 16];
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let period = Duration::from_millis(trace_ms.max(1));
    let mut next_trace = start;
    let mut trace = Vec::new();
    let mut sent: u64 = 0;
    stream.set_write_timeout(Some(Duration::from_millis(if trace_ms > 0 {
        trace_ms
    } else {
        100
    })))?;
    while Instant::now() < end {
        match stream.write(&chunk) {
            Ok(n) => sent += n as u64,
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(e).context("sending"),
        }
        if trace_ms > 0 && Instant::now() >= next_trace {
            if let Some(info) = tcp_info(&stream) {
                trace.push(info);
            }
            next_trace += period;
        }
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    // Wait for the receiver to finish reading, so that its byte count is complete.
    let mut sink = [0u8; 64];
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.read(&mut sink);
    Ok(json!({ "sent": sent, "cc": used, "trace": trace }))
}

/// [t, cwnd, ssthresh, rtt_us, total_retrans, ca_state] from TCP_INFO.
fn tcp_info(stream: &TcpStream) -> Option<[f64; 6]> {
    crate::sockinfo::tcp_info(stream.as_raw_fd()).map(|info| {
        [
            monotonic_s(),
            info.tcpi_snd_cwnd as f64,
            info.tcpi_snd_ssthresh as f64,
            info.tcpi_rtt as f64,
            info.tcpi_total_retrans as f64,
            info.tcpi_ca_state as f64,
        ]
    })
}
