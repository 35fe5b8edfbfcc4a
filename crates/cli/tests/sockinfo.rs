//! What the kernel backend reads of a connection's subflows: an MPTCP connection answers
//! with its subflows; one that fell back to TCP (here: its peer does not speak MPTCP) is
//! recognised as such and read as its one TCP connection, so that its bytes still count.
//! Root and MPTCP needed (see `support::kernel_available`).

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use support::{kernel_available, netns, serial};
use testbed::agent::socket_for;
use testbed::sockinfo::mptcp_subflows;

/// Connects an MPTCP client to `listener` on loopback, sends `n` bytes the listener's side
/// reads, and returns what the client's socket says of its subflows.
fn client_view(listener: TcpListener, n: usize) -> testbed::sockinfo::Connection {
    let to = listener.local_addr().unwrap();
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; n];
        s.read_exact(&mut buf).unwrap();
        s
    });
    let socket = socket_for(&to, true).unwrap();
    socket.connect(&to.into()).unwrap();
    let mut stream: TcpStream = socket.into();
    stream.write_all(&vec![7u8; n]).unwrap();
    let _server = reader.join().unwrap();
    mptcp_subflows(stream.as_raw_fd())
}

/// An MPTCP (`mptcp`) or TCP listener on loopback port `port`.
fn listener(port: u16, mptcp: bool) -> TcpListener {
    let at: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let s = socket_for(&at, mptcp).unwrap();
    s.set_reuse_address(true).unwrap();
    s.bind(&at.into()).unwrap();
    s.listen(4).unwrap();
    s.into()
}

#[test]
fn an_mptcp_connection_and_a_fallen_back_one_are_told_apart() {
    if !kernel_available("an_mptcp_connection_and_a_fallen_back_one_are_told_apart") {
        return;
    }
    let _one = serial();
    let ns = netns("sockinfo");
    ns.ip("link set lo up").unwrap();
    let (mptcp, fallen) = ns
        .enter(|| {
            let mptcp = client_view(listener(5001, true), 100_000);
            let fallen = client_view(listener(5002, false), 100_000);
            Ok((mptcp, fallen))
        })
        .unwrap();

    assert!(!mptcp.fallen_back);
    assert_eq!(mptcp.subflows.len(), 1, "one subflow over loopback");
    let sf = &mptcp.subflows[0];
    assert_eq!(sf.remote.unwrap().port(), 5001);
    assert!(
        sf.info.tcpi_bytes_acked >= 100_000,
        "{}",
        sf.info.tcpi_bytes_acked
    );
    // struct mptcp_info read at the right offsets: every byte sent once, none again.
    let data = mptcp.data_level.expect("MPTCP_INFO with byte counters");
    assert_eq!(data.bytes_sent, 100_000, "{data:?}");
    assert_eq!(data.bytes_retrans, 0);
    assert_eq!(mptcp.reinjected_bytes(), Some(0));

    assert!(
        fallen.fallen_back,
        "a TCP peer makes the MPTCP socket fall back"
    );
    assert_eq!(fallen.subflows.len(), 1);
    let sf = &fallen.subflows[0];
    assert_eq!(sf.remote.unwrap().port(), 5002);
    assert_eq!(sf.local.unwrap().ip().octets(), [127, 0, 0, 1]);
    assert_eq!(fallen.reinjected_bytes(), None);
    assert!(
        sf.info.tcpi_bytes_acked >= 100_000,
        "{}",
        sf.info.tcpi_bytes_acked
    );
}
