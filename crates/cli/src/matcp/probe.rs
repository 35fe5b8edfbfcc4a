//! The traffic of the MATCP tests and benchmark: sequential short connections from inside a
//! cgroup (so that the programs place them), and a sink that reads each to its end.

use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct ConnectArgs {
    /// ADDR:PORT or [ADDR6]:PORT; `[::ffff:a.b.c.d]:PORT` connects an AF_INET6 socket to an
    /// IPv4 host (placed by connect6 among the paths' IPv4 addresses).
    #[arg(long)]
    pub to: SocketAddr,
    /// Connections, one after the other.
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    /// Bytes each sends before closing (0: connect and close).
    #[arg(long, default_value_t = 0)]
    pub bytes: usize,
    /// Join this cgroup v2 directory first: a socket belongs to its creator's cgroup.
    #[arg(long)]
    pub cgroup: Option<PathBuf>,
    /// Then this network namespace (`ip netns exec` would hide the cgroup mount: it mounts
    /// a fresh /sys).
    #[arg(long)]
    pub netns: Option<String>,
}

/// Prints a JSON report: each connection's source address (the path it was placed on)
/// and connect() time, refused connections, and this process's CPU time.
pub fn connect(args: &ConnectArgs) -> Result<bool> {
    if let Some(cgroup) = &args.cgroup {
        let procs = cgroup.join("cgroup.procs");
        // "0": the writing process itself (cgroup v2's cgroup.procs).
        std::fs::write(&procs, "0").with_context(|| format!("joining {}", procs.display()))?;
    }
    if let Some(name) = &args.netns {
        join_netns(name)?;
    }
    let payload = vec![0u8; args.bytes];
    let mut sources = Vec::new();
    let mut connect_ns = Vec::new();
    let mut refused = 0;
    for _ in 0..args.count {
        let start = Instant::now();
        let mut s = match TcpStream::connect(args.to) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                refused += 1;
                continue;
            }
            Err(e) => return Err(e).context(format!("connecting to {}", args.to)),
        };
        connect_ns.push(start.elapsed().as_nanos() as u64);
        sources.push(s.local_addr()?.ip().to_string());
        s.write_all(&payload)?;
        s.shutdown(Shutdown::Write)?;
        // Until the sink closes: the connection ends with everything delivered.
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    }
    let report = serde_json::json!({
        "sources": sources,
        "connect_ns": connect_ns,
        "refused": refused,
        "cpu_ns": cpu_ns(),
    });
    println!("{report}");
    Ok(true)
}

/// Moves this (single-threaded) process into the named network namespace.
fn join_netns(name: &str) -> Result<()> {
    use std::os::fd::AsRawFd;
    let path = std::path::Path::new("/run/netns").join(name);
    let ns = std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: a valid descriptor of a network namespace; no other thread is running.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error()).context(format!("joining namespace {name}"));
    }
    Ok(())
}

/// Runs `mptcp-lab matcp connect` in `cgroup` and namespace `netns` and returns its report.
pub fn run_connect(
    cgroup: &std::path::Path,
    netns: &str,
    to: &str,
    count: usize,
    bytes: usize,
) -> Result<serde_json::Value> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .args(["matcp", "connect", "--to", to, "--netns", netns, "--cgroup"])
        .arg(cgroup)
        .args(["--count", &count.to_string(), "--bytes", &bytes.to_string()])
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "matcp connect: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// This process's user and system time so far.
pub fn cpu_ns() -> u64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// Reads every accepted connection to its end, one thread each, until killed.
pub fn sink(listen: SocketAddr) -> Result<bool> {
    let listener = TcpListener::bind(listen).with_context(|| format!("listening on {listen}"))?;
    println!("listening");
    for stream in listener.incoming() {
        let Ok(mut s) = stream else { continue };
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        });
    }
    Ok(true)
}
