//! `mptcp-lab matcp install|status|remove|bench`: MATCP's path selection per TCP connection
//! on this kernel (eBPF `cgroup/connect4`, `cgroup/connect6` and `sockops`,
//! crates/bpf/src/matcp).

mod bench;
mod probe;
mod status;

use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use mptcp_bpf::matcp::install::{self, Config, Matcp};
use mptcp_bpf::matcp::{MatcpError, PathAddrs, Selector};
use std::net::IpAddr;
use std::path::PathBuf;
use testbed::cleanup;
use testbed::netlink::Rtnl;

#[derive(Subcommand)]
pub enum MatcpAction {
    /// Attach MATCP to a cgroup (default: the whole host): each new TCP connection of its
    /// processes leaves from the path (source address) the selector picks.
    Install {
        #[arg(long, value_enum)]
        selector: SelectorArg,
        /// The paths' source addresses, one per uplink, each routed out of its uplink by a
        /// rule `ip rule add from ADDR table T` (`ip -6 rule` for IPv6); the first is
        /// single-path's. IPv4 or IPv6 (the connections of that family are placed), or one
        /// of each as ADDR4+ADDR6 (both are, sharing the uplink's statistics); every path
        /// has the same families.
        #[arg(long = "path", value_delimiter = ',', required = true)]
        paths: Vec<PathAddrs>,
        /// A cgroup v2 directory; default the root of the cgroup v2 hierarchy.
        #[arg(long)]
        cgroup: Option<PathBuf>,
        /// The refresh constant R (rtt, rtt-variation, drops): after one path was chosen R
        /// times in a row every measure is reset. Default: never.
        #[arg(long)]
        refresh: Option<u32>,
        /// What RTT variation reads: SRTT less the path's smallest RTT, or RFC 6298 RTTVAR.
        #[arg(long, value_enum, default_value_t = VariationArg::Queueing)]
        variation: VariationArg,
        /// Each path must have a route from its address to here: the destination of the
        /// address's family, the default one if none is given.
        #[arg(long, value_delimiter = ',', default_value = DEFAULT_CHECK_DST)]
        check_dst: Vec<IpAddr>,
    },
    /// Per-path statistics and choices, live.
    Status {
        #[arg(long)]
        json: bool,
        /// Print again every this many seconds until interrupted.
        #[arg(long, value_name = "SECONDS")]
        watch: Option<f64>,
    },
    /// Detach and unpin.
    Remove,
    /// The cost: connect latency and CPU per connection with the programs attached and
    /// without, over two veth paths between two namespaces.
    Bench {
        /// Connections per measurement.
        #[arg(long, default_value_t = 2000)]
        connections: usize,
        /// Interleaved rounds of (without, with).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Sequential connections that each send some bytes (for the tests and the benchmark).
    #[command(hide = true)]
    Connect(probe::ConnectArgs),
    /// Accepts connections and reads each to its end (for the tests and the benchmark).
    #[command(hide = true)]
    Sink {
        #[arg(long)]
        listen: std::net::SocketAddr,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SelectorArg {
    SinglePath,
    Rtt,
    RttVariation,
    Drops,
    WeightedRtt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VariationArg {
    Queueing,
    Rttvar,
}

impl SelectorArg {
    fn selector(self, variation: VariationArg) -> Selector {
        match self {
            SelectorArg::SinglePath => Selector::SinglePath,
            SelectorArg::Rtt => Selector::Rtt,
            SelectorArg::RttVariation if variation == VariationArg::Rttvar => Selector::Rttvar,
            SelectorArg::RttVariation => Selector::RttVariation,
            SelectorArg::Drops => Selector::Drops,
            SelectorArg::WeightedRtt => Selector::WeightedRtt,
        }
    }
}

pub fn run(action: MatcpAction) -> Result<bool> {
    match action {
        MatcpAction::Install {
            selector,
            paths,
            cgroup,
            refresh,
            variation,
            check_dst,
        } => {
            install::require_root("install")?;
            start();
            let config = Config {
                selector: selector.selector(variation),
                paths,
                refresh,
                cgroup: match cgroup {
                    Some(c) => c,
                    None => install::cgroup2_root()?,
                },
                cwnd_clamp: None,
            };
            config.validate()?;
            check_paths(&config.paths, &check_dst)?;
            let installed = matcp().install(&config)?;
            println!(
                "matcp: {} over {} path(s) for cgroup {}{} (programs {:?})",
                config.selector,
                config.paths.len(),
                config.cgroup.display(),
                config
                    .refresh
                    .map(|r| format!(", refresh after {r} in a row"))
                    .unwrap_or_default(),
                installed.program_ids
            );
            Ok(true)
        }
        MatcpAction::Status { json, watch } => {
            install::require_root("status")?;
            start();
            status::show(&matcp(), json, watch)
        }
        MatcpAction::Remove => {
            install::require_root("remove")?;
            start();
            if matcp().remove()? {
                println!("matcp: removed");
            } else {
                println!("matcp: not installed");
            }
            Ok(true)
        }
        MatcpAction::Bench {
            connections,
            rounds,
        } => {
            install::require_root("bench")?;
            start();
            bench::run(connections, rounds)
        }
        MatcpAction::Connect(args) => probe::connect(&args),
        MatcpAction::Sink { listen } => probe::sink(listen),
    }
}

/// Every command starts by removing what a killed earlier one left (an install cut short).
fn start() {
    for what in cleanup::remove_leftovers() {
        eprintln!("removed a killed run's {what}");
    }
}

/// The installation `status` and `remove` find (under $MPTCP_LAB_BPF_ROOT if set), staged
/// under a name the next start removes if this process dies.
fn matcp() -> Matcp {
    Matcp::from_env(PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name("matcp-new")))
}

/// Addresses that only a default route reaches (RFC 5737's TEST-NET-2, RFC 3849's
/// documentation prefix): a path that reaches them reaches the Internet.
const DEFAULT_CHECK_DST: &str = "198.51.100.1,2001:db8::1";

/// Each path's addresses must be this host's (bpf_bind would fail on every connection
/// otherwise) and have a route out from them.
fn check_paths(paths: &[PathAddrs], dsts: &[IpAddr]) -> Result<(), MatcpError> {
    for addr in paths.iter().flat_map(PathAddrs::addrs) {
        if let Err(e) = std::net::UdpSocket::bind((addr, 0)) {
            return Err(MatcpError::NotLocal(addr, e.to_string()));
        }
        let dst = check_dst_for(addr, dsts);
        let routed = Rtnl::open().and_then(|mut r| r.output_interface(addr, dst));
        if routed.is_err() {
            return Err(MatcpError::NoRoute { addr, dst });
        }
    }
    Ok(())
}

/// The destination of `addr`'s family among `dsts`, else the default one of that family.
fn check_dst_for(addr: IpAddr, dsts: &[IpAddr]) -> IpAddr {
    let same_family = |d: &IpAddr| d.is_ipv4() == addr.is_ipv4();
    dsts.iter().copied().find(same_family).unwrap_or_else(|| {
        (DEFAULT_CHECK_DST.split(','))
            .filter_map(|d| d.parse().ok())
            .find(same_family)
            .expect("a default of each family")
    })
}
