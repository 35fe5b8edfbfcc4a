//! Captures of links in pcap form (raw IPv4, nanosecond timestamps), for Wireshark and
//! tshark, as both backends write them: each packet when it reaches the far end of its link
//! (`--pcap LINK`), so a capture of the link into a queue and one of the queue's own link
//! show what the queue dropped. Also the one addressing of hosts' interfaces both backends
//! use, so that the captures of a scenario name the same addresses on either.

use anyhow::{Context, Result};
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use scenario::Scenario;
use scenario::model::DirId;
use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The address of the host interface whose outgoing direction is `out_dir`:
/// `10.<link / 256>.<link % 256>.<1 for side a, 2 for side b>`.
pub fn interface_address(out_dir: DirId) -> Ipv4Addr {
    let link = out_dir.link().index();
    Ipv4Addr::new(
        10,
        (link >> 8) as u8,
        link as u8,
        1 + out_dir.is_b_to_a() as u8,
    )
}

/// One link's capture file.
pub struct Capture {
    writer: PcapWriter<BufWriter<File>>,
    /// What time 0 of the run's clock is since the Unix epoch: the emulator's wall-clock
    /// start (so captures show real dates, which line up with the hosts' own timestamps),
    /// zero for the simulator (as ns-3's captures, the simulated clock itself).
    epoch: Duration,
}

impl Capture {
    pub fn create(path: &Path, epoch: Duration) -> Result<Capture> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file =
            File::create(path).with_context(|| format!("creating capture {}", path.display()))?;
        let header = PcapHeader {
            datalink: DataLink::RAW,
            ts_resolution: pcap_file::TsResolution::NanoSecond,
            ..Default::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header)
            .with_context(|| format!("writing capture {}", path.display()))?;
        Ok(Capture { writer, epoch })
    }

    /// A whole packet; `at`: ns since the start of the run.
    pub fn write(&mut self, at: u64, pkt: &[u8]) -> Result<()> {
        self.write_headers(at, pkt, pkt.len() as u32)
    }

    /// The first bytes of a packet of `wire_len` bytes (its headers; the capture says the
    /// rest was cut, as a capture with a snap length does).
    pub fn write_headers(&mut self, at: u64, headers: &[u8], wire_len: u32) -> Result<()> {
        let packet = PcapPacket::new(self.epoch + Duration::from_nanos(at), wire_len, headers);
        self.writer
            .write_packet(&packet)
            .context("writing a captured packet")?;
        Ok(())
    }

    /// Writes out what is buffered and closes the file.
    pub fn finish(self) -> Result<()> {
        use std::io::Write;
        self.writer
            .into_writer()
            .flush()
            .context("writing a captured packet")
    }
}

/// `--pcap LINK`: the link ids and capture files of one run of `sc` with `seed`, in `dir`'s
/// `pcap/` folder (`<variant>-seed<N>-<link>.pcap`).
pub fn capture_files(
    sc: &Scenario,
    links: &[String],
    dir: &Path,
    seed: u64,
) -> Result<Vec<(usize, PathBuf)>> {
    links
        .iter()
        .map(|name| {
            let id = sc
                .links
                .iter()
                .position(|l| &l.name == name)
                .with_context(|| {
                    let known: Vec<&str> = sc.links.iter().map(|l| l.name.as_str()).collect();
                    format!(
                        "--pcap {name}: no such link; links are {}",
                        known.join(", ")
                    )
                })?;
            // The link's name becomes part of a file name: nothing in it may lead out of
            // the folder (the loader lets a link be called `../x`).
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
            if !name.chars().all(plain) || name.starts_with('.') {
                anyhow::bail!(
                    "--pcap {name}: this link's name cannot name a capture file (letters, \
                     digits, `.`, `_` and `-` only, not first `.`): give the link a plain \
                     `name` in the scenario"
                );
            }
            let variant = sc.variant_dir();
            Ok((
                id,
                dir.join("pcap")
                    .join(format!("{variant}-seed{seed}-{name}.pcap")),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::capture_files;
    use scenario::{LoadOptions, load_str};
    use std::path::Path;

    fn scenario(link_name: &str) -> scenario::Scenario {
        let text = format!(
            r#"
[scenario]
name = "t"
duration = "1s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
name = "{link_name}"
a = "a"
b = "b"
rate = "1Mbps"
delay = "1ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"#
        );
        load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
    }

    #[test]
    fn a_capture_file_stays_in_the_folder() {
        let dir = Path::new("out");
        let files = capture_files(&scenario("up-1"), &["up-1".into()], dir, 3).unwrap();
        assert_eq!(
            files,
            [(0, dir.join("pcap").join("default-seed3-up-1.pcap"))]
        );
        for name in ["../x", "..", ".hidden", "a/b"] {
            let err = capture_files(&scenario(name), &[name.into()], dir, 1).unwrap_err();
            assert!(
                err.to_string().contains("cannot name a capture file"),
                "{name}: {err}"
            );
        }
        let err = capture_files(&scenario("up"), &["down".into()], dir, 1).unwrap_err();
        assert!(
            err.to_string().contains("no such link; links are up"),
            "{err}"
        );
    }
}
