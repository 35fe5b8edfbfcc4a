//! Capture of a link in pcap form (raw IPv4, nanosecond timestamps), for Wireshark and
//! tshark. Each packet is written when it reaches the far end of the link.

use anyhow::{Context, Result};
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

pub struct Capture {
    writer: PcapWriter<BufWriter<File>>,
    /// Wall-clock time of the run's start (time 0 of the emulator's clock), so captures
    /// show real dates, which line up with timestamps the hosts' programs put in packets.
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

    /// `at`: ns since the start of the run.
    pub fn write(&mut self, at: u64, pkt: &[u8]) -> Result<()> {
        let ts = self.epoch + Duration::from_nanos(at);
        self.writer
            .write_packet(&PcapPacket::new(ts, pkt.len() as u32, pkt))
            .context("writing a captured packet")?;
        Ok(())
    }
}
