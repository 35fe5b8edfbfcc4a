//! A deterministic packet-level simulator of TCP and MPTCP over the scenario's network. Same
//! scenario and seed, same result, bit for bit.
//!
//! Layout: `connection` (the two sans-I/O endpoints of a connection and their timer table),
//! `tcp` (one subflow's sender and receiver), `mptcp` (path manager, scheduler, data level,
//! stale subflows), `traffic` (the applications), `jitter` (hosts' processing times), `jiffies`
//! (Linux's tick clock, for the timers kept as Linux keeps them), `world`
//! (the fabric, the dispatcher and the measurements, driven by `engine`'s event queue).

pub mod capture;
pub mod connection;
pub mod engine;
pub mod ids;
pub mod jiffies;
mod jitter;
pub mod mptcp;
pub mod packet;
mod ranges;
pub mod tcp;
mod traffic;
pub mod wire;
mod world;

use scenario::Scenario;
use scenario::results::{RunResult, RunStats};
use std::path::PathBuf;
use std::time::Instant;

/// The fabric a run of `sc` with `seed` uses: every link direction with its own random
/// stream (the emulator builds the same one for the same seed).
pub fn fabric(sc: &Scenario, seed: u64) -> net::Fabric<packet::InFlight> {
    net::Fabric::new(sc, seed)
}

/// When each flow of a run starts and stops (the kernel backend lays them out the same).
pub fn flow_slots(sc: &Scenario, seed: u64) -> Vec<net::layout::FlowSlot> {
    net::layout::flow_slots(sc, seed)
}

/// The simulator as a backend of `run`.
#[derive(Clone, Debug, Default)]
pub struct Simulator {
    /// `--pcap LINK`: links to capture, and the folder whose `pcap/` the files go to.
    pcap_links: Vec<String>,
    pcap_dir: PathBuf,
}

impl Simulator {
    /// A simulator that captures `links` of each run into `dir/pcap/`
    /// (`<variant>-seed<N>-<link>.pcap`).
    pub fn capturing(links: Vec<String>, dir: PathBuf) -> Self {
        Simulator {
            pcap_links: links,
            pcap_dir: dir,
        }
    }
}

impl scenario::Backend for Simulator {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn fork(&self) -> Option<Box<dyn scenario::Backend + Send>> {
        Some(Box::new(self.clone()))
    }

    fn run(
        &mut self,
        sc: &Scenario,
        seed: u64,
        progress: &mut dyn scenario::Progress,
    ) -> anyhow::Result<RunResult> {
        if self.pcap_links.is_empty() {
            return Ok(run(sc, seed, |f| progress.fraction(f)));
        }
        let files = net::capture::capture_files(sc, &self.pcap_links, &self.pcap_dir, seed)?;
        run_capturing(sc, seed, &files, |f| progress.fraction(f))
    }
}

/// Runs one variant with one seed. `progress` receives the fraction of simulated time done.
pub fn run(sc: &Scenario, seed: u64, progress: impl FnMut(f64)) -> RunResult {
    run_world(sc, seed, None, progress).0
}

/// [`run`], writing a capture of each link of `files` (link index, file) as it goes.
pub fn run_capturing(
    sc: &Scenario,
    seed: u64,
    files: &[(usize, PathBuf)],
    progress: impl FnMut(f64),
) -> anyhow::Result<RunResult> {
    let captures = capture::LinkCaptures::create(sc, files)?;
    let (result, captures) = run_world(sc, seed, Some(captures), progress);
    if let Some(captures) = captures {
        captures.finish()?;
    }
    Ok(result)
}

fn run_world(
    sc: &Scenario,
    seed: u64,
    captures: Option<capture::LinkCaptures>,
    mut progress: impl FnMut(f64),
) -> (RunResult, Option<capture::LinkCaptures>) {
    let started = Instant::now();
    let drawn = net::draws::for_run(sc, seed);
    let sc: &Scenario = &drawn;
    let mut world = world::World::new(sc, seed);
    if let Some(captures) = captures {
        world.capture(captures);
    }
    let end = world.end as f64;
    world.run(|t| progress(t as f64 / end));
    let captures = world.take_captures();
    let events = world.queue.popped();
    let packet_hops = world.packet_hops;
    let fct = world.completion_times();
    let reinjected = world.reinjected_bytes();
    let loss_recovery = world.loss_recovery();
    let receiver_segments = world.receiver_segments_measured();
    let slots = world::slots(&world.flows);
    let world::World {
        mut meter,
        link_meter,
        fabric,
        ..
    } = world;
    for (flow, bytes) in reinjected.into_iter().enumerate() {
        meter.reinjected(flow, bytes);
    }
    for (flow, counts) in loss_recovery.into_iter().enumerate() {
        meter.loss_recovery(flow, counts);
    }
    for (flow, counts) in receiver_segments.into_iter().enumerate() {
        meter.receiver_segments(flow, counts);
    }
    let mut measured = meter.finish(sc, &slots, &fct);
    measured.extend(link_meter.finish(sc, &fabric.links, Some(&fabric.routes)));
    let measure::Measured {
        metrics,
        flow_goodput_mbps,
        series,
    } = measured;
    let result = RunResult {
        scenario: sc.name.clone(),
        variant: sc.variant.clone(),
        backend: "sim".into(),
        seed,
        params: sc.params.clone(),
        metrics,
        flow_goodput_mbps,
        series,
        stats: RunStats {
            events,
            packet_hops,
            simulated_s: sc.duration.secs(),
            wall_s: started.elapsed().as_secs_f64(),
        },
        emulator: None,
    };
    (result, captures)
}
