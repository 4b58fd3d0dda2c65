//! One line of `/proc/net/tcp` or `/proc/net/tcp6`, read: the local and
//! remote endpoints, the socket state and its inode (what a process's
//! `fd/` links name). Discovery uses it to see a JVM's listening socket
//! without dialling it. Pure: the actors read the files.

/// An address as the kernel table writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ip {
    V4([u8; 4]),
    V6([u8; 16]),
}

impl Ip {
    /// Loopback, or the unspecified address (bound to every interface,
    /// loopback included).
    pub fn reachable_on_loopback(&self) -> bool {
        match self {
            Ip::V4(a) => a[0] == 127 || *a == [0; 4],
            Ip::V6(a) => {
                let mut lo = [0u8; 16];
                lo[15] = 1;
                *a == lo
                    || *a == [0; 16]
                    // ::ffff:127.x.x.x and ::ffff:0.0.0.0
                    || (a[..10] == [0; 10] && a[10..12] == [0xff, 0xff] && (a[12] == 127 || a[12..] == [0; 4]))
            }
        }
    }
}

impl Ip {
    /// The address to dial to reach a socket bound here, as a host for a
    /// connect: the address itself, the loopback of its family for the
    /// unspecified address, the IPv4 one inside an IPv4-mapped address.
    pub fn dial_host(&self) -> String {
        match self {
            Ip::V4([0, 0, 0, 0]) => "127.0.0.1".into(),
            Ip::V4(a) => core::net::Ipv4Addr::from(*a).to_string(),
            Ip::V6(a) => {
                let v6 = core::net::Ipv6Addr::from(*a);
                match v6.to_ipv4_mapped() {
                    Some(v4) => Ip::V4(v4.octets()).dial_host(),
                    None if v6.is_unspecified() => "::1".into(),
                    None => v6.to_string(),
                }
            }
        }
    }
}

/// The states discovery cares about; the rest are `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpState {
    Established,
    Listen,
    Other(u8),
}

/// One socket of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSocket {
    pub local: Ip,
    pub local_port: u16,
    pub remote: Ip,
    pub remote_port: u16,
    pub state: TcpState,
    pub uid: u32,
    pub inode: u64,
}

impl TcpSocket {
    /// Reads one line; `None` for the header or anything malformed.
    pub fn parse(line: &str) -> Option<TcpSocket> {
        let mut f = line.split_whitespace();
        let slot = f.next()?;
        if !slot.ends_with(':') {
            return None;
        }
        let (local, local_port) = endpoint(f.next()?)?;
        let (remote, remote_port) = endpoint(f.next()?)?;
        let state = match u8::from_str_radix(f.next()?, 16).ok()? {
            0x01 => TcpState::Established,
            0x0A => TcpState::Listen,
            s => TcpState::Other(s),
        };
        // tx:rx queues, timer, retransmits.
        let mut f = f.skip(3);
        let uid = f.next()?.parse().ok()?;
        let inode = f.nth(1)?.parse().ok()?;
        Some(TcpSocket {
            local,
            local_port,
            remote,
            remote_port,
            state,
            uid,
            inode,
        })
    }
}

/// `0100007F:1F90`: the address as 32-bit words in host (little-endian)
/// order, the port big-endian.
fn endpoint(field: &str) -> Option<(Ip, u16)> {
    let (addr, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let w = u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16).ok()?;
        Some(w.to_le_bytes())
    };
    let ip = match addr.len() {
        8 => Ip::V4(word(0)?),
        32 => {
            let mut a = [0u8; 16];
            for i in 0..4 {
                a[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Ip::V6(a)
        }
        _ => return None,
    };
    Some((ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_of_both_tables_read() {
        let v4 = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0";
        let s = TcpSocket::parse(v4).expect("v4");
        assert_eq!(s.local, Ip::V4([127, 0, 0, 1]));
        assert_eq!(
            (s.local_port, s.state, s.uid, s.inode),
            (8080, TcpState::Listen, 1000, 12345)
        );
        assert!(s.local.reachable_on_loopback());
        let v6 = "   1: 00000000000000000000000001000000:138D 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 100 0 0 10 0";
        let s = TcpSocket::parse(v6).expect("v6");
        assert!(s.local.reachable_on_loopback(), "{s:?}");
        assert_eq!((s.local_port, s.inode), (5005, 777));
        let est = "   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 99 1 0";
        assert_eq!(
            TcpSocket::parse(est).map(|s| s.state),
            Some(TcpState::Established)
        );
        let remote = "   3: 0500000A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5 1 0";
        assert!(
            !TcpSocket::parse(remote)
                .expect("10.0.0.5")
                .local
                .reachable_on_loopback()
        );
        assert!(TcpSocket::parse("  sl  local_address rem_address   st tx_queue").is_none());
    }

    #[test]
    fn each_bound_address_is_dialled_where_it_listens() {
        let check = |ip: Ip, expect: &str| assert_eq!(ip.dial_host(), expect, "{ip:?}");
        check(Ip::V4([127, 0, 0, 1]), "127.0.0.1");
        check(Ip::V4([127, 0, 0, 2]), "127.0.0.2");
        check(Ip::V4([0, 0, 0, 0]), "127.0.0.1");
        let mut lo = [0u8; 16];
        lo[15] = 1;
        check(Ip::V6(lo), "::1");
        check(Ip::V6([0; 16]), "::1");
        let mut mapped = [0u8; 16];
        mapped[10..].copy_from_slice(&[0xff, 0xff, 127, 0, 0, 3]);
        check(Ip::V6(mapped), "127.0.0.3");
        mapped[12..].copy_from_slice(&[0; 4]);
        check(Ip::V6(mapped), "127.0.0.1");
    }

    proptest! {
        #[test]
        fn never_panics(line in ".{0,200}") {
            let _ = TcpSocket::parse(&line);
        }

        #[test]
        fn ports_and_inodes_round_trip(port in any::<u16>(), inode in any::<u64>(), a in any::<[u8; 4]>()) {
            let addr = u32::from_le_bytes(a);
            let line = format!("   7: {addr:08X}:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1 0");
            let s = TcpSocket::parse(&line).expect("parses");
            prop_assert_eq!((s.local, s.local_port, s.inode), (Ip::V4(a), port, inode));
        }
    }
}
