use std::path::PathBuf;

/// What can go wrong managing the congestion controls, worded for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum CcError {
    #[error("`mptcp-lab cc {0}` needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo")]
    NotRoot(&'static str),
    #[error(
        "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): eBPF congestion controls need CONFIG_DEBUG_INFO_BTF=y"
    )]
    NoBtf,
    #[error("this kernel has no MPTCP (/proc/sys/net/mptcp is missing): it needs CONFIG_MPTCP=y")]
    NoMptcp,
    #[error(
        "this kernel cannot register eBPF congestion controls (no struct_ops for tcp_congestion_ops in its BTF): it needs Linux 5.6 or newer with CONFIG_BPF_JIT and CONFIG_BPF_SYSCALL"
    )]
    NoStructOps,
    #[error("this mptcp-lab was built without its eBPF programs: {0}")]
    NotBuilt(&'static str),
    #[error(
        "unknown congestion control `{0}`: expected one of lia, olia, balia, wvegas, ewtcp, fcoupled (fullycoupled), or all"
    )]
    Unknown(String),
    #[error(
        "the name `{0}` is already taken by a congestion control mptcp-lab did not install (a kernel module or another eBPF program); remove that one first, or install under a prefix (MPTCP_LAB_CC_PREFIX)"
    )]
    NameTaken(String),
    #[error(
        "`{name}` is in use by {sockets} socket(s); close them first, or pass --force (they keep running the removed algorithm until they close)"
    )]
    InUse { name: String, sockets: usize },
    #[error("`{name}`: the kernel refused to load or register it: {reason}")]
    Load { name: String, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{context}: {reason}")]
    Bpf { context: String, reason: String },
}

pub type Result<T> = std::result::Result<T, CcError>;

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> CcError {
    let path = path.into();
    move |source| CcError::Io { path, source }
}
