//! A scenario's network, running: the hosts' namespaces and the emulator thread that
//! carries their packets. The kernel backend, the emulator's tests and its benchmark all
//! start one of these.

use crate::emu::{Clock, EmuConfig, EmuReport, Emulator};
use crate::hosts::Hosts;
use crate::netns::Netns;
use crate::plan::Plan;
use crate::received::ReceivedPerRoute;
use anyhow::{Context, Result, anyhow, bail};
use scenario::Scenario;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

pub struct Network {
    pub plan: Plan,
    sc: Scenario,
    clock: Clock,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<EmuReport>>>,
    /// Per-route payload the receivers count, when every flow is plain TCP.
    pub received: Option<Arc<ReceivedPerRoute>>,
    // Last: the namespaces go after the emulator has let go of their devices.
    pub hosts: Hosts,
}

impl Network {
    /// Creates the hosts and starts the emulator; time 0 of the scenario is now.
    pub fn start(sc: &Scenario, config: EmuConfig) -> Result<Network> {
        let plan = Plan::new(sc)?;
        let (hosts, tuns) = Hosts::create(sc, &plan)?;
        let mut emu = Emulator::new(sc, &plan, tuns, config)?;
        let received = sc
            .flows
            .iter()
            .all(|f| f.protocol == scenario::spec::Protocol::Tcp)
            .then(|| Arc::new(ReceivedPerRoute::new(&plan, sc.measure.warmup.nanos())));
        if let Some(r) = &received {
            emu.count_received(r.clone());
        }
        let clock = emu.clock();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("emulator".into())
            .spawn(move || emu.run(flag))
            .context("starting the emulator thread")?;
        Ok(Network {
            plan,
            sc: sc.clone(),
            clock,
            stop,
            thread: Some(thread),
            received,
            hosts,
        })
    }

    /// Every host's MPTCP and TCP counters of [`crate::nstat::KEPT`], named
    /// `kernel.<host>.<counter>`.
    pub fn counters(&self) -> Result<std::collections::BTreeMap<String, u64>> {
        let mut out = std::collections::BTreeMap::new();
        for (node, ns) in &self.hosts.namespaces {
            let host = &self.sc.nodes[*node].name;
            for (k, v) in ns.enter(crate::nstat::read_kept)? {
                let counter = scenario::metrics::Diagnostic::HostCounter {
                    host: host.clone(),
                    counter: k.to_string(),
                };
                out.insert(counter.into(), v);
            }
        }
        Ok(out)
    }

    /// The emulator's clock: scenario time is `clock.now()`.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    fn node(&self, host: &str) -> Result<scenario::model::NodeId> {
        self.sc
            .nodes
            .iter()
            .position(|n| n.name == host)
            .map(scenario::model::NodeId)
            .ok_or_else(|| anyhow!("no host `{host}` in scenario {}", self.sc.name))
    }

    pub fn netns(&self, host: &str) -> Result<&Netns> {
        Ok(self.hosts.netns(self.node(host)?))
    }

    /// The address of `host`'s interface `iface` (its first interface if `None`).
    pub fn addr(&self, host: &str, iface: Option<&str>) -> Result<Ipv4Addr> {
        let node = self.node(host)?;
        let mut ports = self.plan.ports_of(node);
        let port = match iface {
            Some(i) => ports.find(|p| p.iface == i),
            None => ports.next(),
        };
        port.map(|p| p.addr)
            .ok_or_else(|| anyhow!("host `{host}` has no interface {iface:?}"))
    }

    /// Whether the emulator is still running (it stops by itself at `EmuConfig::until`).
    pub fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the emulator and returns its report.
    pub fn stop(mut self) -> Result<EmuReport> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow!("the emulator thread panicked"))?,
            None => bail!("the emulator was already stopped"),
        }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
