use std::net::IpAddr;
use std::path::PathBuf;

/// What can go wrong with `mptcp-lab matcp`, worded for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum MatcpError {
    #[error("`mptcp-lab matcp {0}` needs root (CAP_BPF, CAP_NET_ADMIN): run it with sudo")]
    NotRoot(&'static str),
    #[error(
        "no cgroup v2 hierarchy is mounted (none in /proc/self/mounts): the programs attach to a cgroup v2; mount one with `mount -t cgroup2 none /sys/fs/cgroup/unified`"
    )]
    NoCgroup2,
    #[error("{0} is not a cgroup v2 directory")]
    NotCgroup2(PathBuf),
    #[error(
        "{0} is not an address of this host (bind: {1}): a path is one of the host's own source addresses (an IPv6 one once duplicate address detection has passed: not `tentative` in `ip -6 addr`)"
    )]
    NotLocal(IpAddr, String),
    #[error(
        "no route from {addr} to {dst}: add the uplink's table and rule (`ip rule add from {addr} table T`, `ip route add default via GATEWAY table T`; `ip -6` for IPv6), or name a reachable destination with --check-dst"
    )]
    NoRoute { addr: IpAddr, dst: IpAddr },
    #[error("{0} paths given: 1 to {max} are supported", max = super::MAX_PATHS)]
    PathCount(usize),
    #[error("the address {0} is given twice: each path is its own uplink's address")]
    Repeated(IpAddr),
    #[error(
        "path {index} ({path}) and path 1 ({first}) differ in address families: every path needs an address of each family the paths place (all IPv4, all IPv6, or all both as ADDR4+ADDR6)"
    )]
    Families {
        index: usize,
        path: String,
        first: String,
    },
    #[error(
        "unknown selector `{0}`: expected single-path, rtt, rtt-variation, drops or weighted-rtt"
    )]
    UnknownSelector(String),
    #[error("the refresh constant R must be at least 1 (leave it out to never refresh)")]
    ZeroRefresh,
    #[error("MATCP is already installed ({0}); `mptcp-lab matcp remove` first")]
    AlreadyInstalled(PathBuf),
    #[error("MATCP is not installed (nothing pinned at {0})")]
    NotInstalled(PathBuf),
    #[error("this mptcp-lab was built without its eBPF programs: {0}")]
    NotBuilt(&'static str),
    #[error("{context}: {reason}")]
    Bpf { context: String, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, MatcpError>;

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> MatcpError {
    let path = path.into();
    move |source| MatcpError::Io { path, source }
}

pub(crate) fn bpf(context: &str) -> impl FnOnce(libbpf_rs::Error) -> MatcpError + '_ {
    move |e| MatcpError::Bpf {
        context: context.to_string(),
        reason: e.to_string(),
    }
}
