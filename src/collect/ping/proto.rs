//! The wire format between the pinger and `rocetop pingd`, all over one TCP connection:
//!
//! 1. the pinger sends a [`Hello`] (8 bytes: `RTPING`, version, mode; TCP sessions say version 1,
//!    RDMA sessions 2, whose `Info` carries the RoCE versions the sender can use);
//! 2. mode `T` (TCP ping): the pinger sends fixed-size [`Probe`]s, the responder echoes every byte;
//! 3. mode `R` (RDMA RC ping-pong): the pinger sends [`Msg::Period`] (its probe period, so the
//!    responder knows how long to busy-poll) and [`Msg::Info`] with its QP number, PSN, LID and GID;
//!    the responder agrees on a RoCE version and answers with its own `Info` (that one version),
//!    or a [`Msg::Refuse`] saying why it cannot
//!    ("RDMA unavailable on this host: no devices"). The TCP connection stays open as the session's
//!    lifeline: when it closes, the responder tears its QP down.
//!
//! Integers are big-endian. Decoding never panics on any input.

use super::gid::Versions;
use std::fmt;

pub const MAGIC: &[u8; 6] = b"RTPING";
/// The protocol of RDMA sessions: 2 since `Info` carries the RoCE versions.
pub const VERSION: u8 = 2;
/// TCP sessions did not change: they still say 1, which every pingd speaks.
pub const TCP_VERSION: u8 = 1;
pub const HELLO_LEN: usize = 8;
pub const PROBE_LEN: usize = 24;
/// A refusal reason longer than this is cut (it is a sentence for a person, not data).
pub const MAX_REASON: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Tcp,
    /// RDMA over an RC queue pair (the NIC resends what the fabric drops).
    Rdma,
    /// RDMA over a UD queue pair: nothing is resent, a dropped probe is lost.
    RdmaUd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    pub mode: Mode,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    #[error("not a rocetop ping peer (bad magic)")]
    BadMagic,
    #[error("protocol version {0}, this rocetop speaks {TCP_VERSION} and {VERSION}")]
    Version(u8),
    #[error(
        "the pinger speaks RDMA protocol {TCP_VERSION}, without RoCE versions in its handshake: \
         it needs rocetop as new as this pingd"
    )]
    OldRdma,
    #[error("unknown mode {0:#04x}")]
    Mode(u8),
    #[error("unknown message tag {0:#04x}")]
    Tag(u8),
    #[error("PSN {0:#x} does not fit in 24 bits")]
    Psn(u32),
    #[error("message truncated")]
    Incomplete,
    #[error("refusal reason is not UTF-8")]
    Utf8,
}

impl Hello {
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut b = [0u8; HELLO_LEN];
        b[..6].copy_from_slice(MAGIC);
        (b[6], b[7]) = match self.mode {
            Mode::Tcp => (TCP_VERSION, b'T'),
            Mode::Rdma => (VERSION, b'R'),
            Mode::RdmaUd => (VERSION, b'U'),
        };
        b
    }

    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let b: &[u8; HELLO_LEN] = b
            .get(..HELLO_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(ProtoError::Incomplete)?;
        if &b[..6] != MAGIC {
            return Err(ProtoError::BadMagic);
        }
        if b[6] != TCP_VERSION && b[6] != VERSION {
            return Err(ProtoError::Version(b[6]));
        }
        let mode = match (b[7], b[6]) {
            (b'T', _) => Mode::Tcp,
            (b'R', VERSION) => Mode::Rdma,
            (b'U', VERSION) => Mode::RdmaUd,
            (b'R', _) => return Err(ProtoError::OldRdma),
            (m, _) => return Err(ProtoError::Mode(m)),
        };
        Ok(Self { mode })
    }
}

/// One TCP ping: its sequence number, when it was due (its slot) and when it left, both in ns since
/// the pinger started. The responder echoes it unchanged, so the pinger needs no lookup to time it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub seq: u64,
    pub intended_ns: u64,
    pub sent_ns: u64,
}

impl Probe {
    pub fn encode(&self) -> [u8; PROBE_LEN] {
        let mut b = [0u8; PROBE_LEN];
        b[..8].copy_from_slice(&self.seq.to_be_bytes());
        b[8..16].copy_from_slice(&self.intended_ns.to_be_bytes());
        b[16..].copy_from_slice(&self.sent_ns.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; PROBE_LEN]) -> Self {
        let u = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i..i + 8]);
            u64::from_be_bytes(x)
        };
        Self {
            seq: u(0),
            intended_ns: u(8),
            sent_ns: u(16),
        }
    }
}

/// What one side of an RC connection must tell the other to bring its QP to RTR/RTS.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ConnInfo {
    pub qpn: u32,
    /// Initial packet sequence number (24 bits).
    pub psn: u32,
    /// 0 on RoCE (addressing is by GID), set on InfiniBand.
    pub lid: u16,
    pub gid: [u8; 16],
    /// Active path MTU as the `ibv_mtu` enum (1 = 256 ... 5 = 4096); both sides use the smaller.
    pub mtu: u8,
    /// The pinger: the RoCE versions it can send its GID as; pingd: the one agreed on.
    pub versions: Versions,
}

impl fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "qpn {:#x} psn {:#x} lid {} gid {} mtu {} {}",
            self.qpn,
            self.psn,
            self.lid,
            gid_string(&self.gid),
            self.mtu,
            self.versions
        )
    }
}

/// `fe80:0000:...` as `ibv_devinfo -v` and sysfs print it.
pub fn gid_string(g: &[u8; 16]) -> String {
    g.chunks(2)
        .map(|c| format!("{:02x}{:02x}", c[0], c.get(1).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(":")
}

const INFO_LEN: usize = 1 + 4 + 4 + 2 + 16 + 1 + 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    Info(ConnInfo),
    Refuse(String),
    /// The pinger's probe period in ns (sent before its `Info`; a responder may go without it).
    Period(u64),
}

const PERIOD_LEN: usize = 9;

impl Msg {
    pub fn encode(&self) -> Result<Vec<u8>, ProtoError> {
        match self {
            Msg::Info(i) => {
                if i.psn > 0x00ff_ffff {
                    return Err(ProtoError::Psn(i.psn));
                }
                let mut b = Vec::with_capacity(INFO_LEN);
                b.push(b'I');
                b.extend_from_slice(&i.qpn.to_be_bytes());
                b.extend_from_slice(&i.psn.to_be_bytes());
                b.extend_from_slice(&i.lid.to_be_bytes());
                b.extend_from_slice(&i.gid);
                b.push(i.mtu);
                b.push(i.versions.bits());
                Ok(b)
            }
            Msg::Period(ns) => {
                let mut b = vec![b'P'];
                b.extend_from_slice(&ns.to_be_bytes());
                Ok(b)
            }
            Msg::Refuse(r) => {
                let mut end = r.len().min(MAX_REASON);
                while !r.is_char_boundary(end) {
                    end -= 1;
                }
                let r = &r.as_bytes()[..end];
                let mut b = Vec::with_capacity(3 + r.len());
                b.push(b'E');
                b.extend_from_slice(&(r.len() as u16).to_be_bytes());
                b.extend_from_slice(r);
                Ok(b)
            }
        }
    }

    /// Decode one message from the front of `b`: the message and how many bytes it used, or
    /// `Incomplete` when more bytes are needed.
    pub fn decode(b: &[u8]) -> Result<(Msg, usize), ProtoError> {
        let tag = *b.first().ok_or(ProtoError::Incomplete)?;
        match tag {
            b'I' => {
                let m = b.get(..INFO_LEN).ok_or(ProtoError::Incomplete)?;
                let u32_at = |i: usize| u32::from_be_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
                let psn = u32_at(5);
                if psn > 0x00ff_ffff {
                    return Err(ProtoError::Psn(psn));
                }
                let mut gid = [0u8; 16];
                gid.copy_from_slice(&m[11..27]);
                Ok((
                    Msg::Info(ConnInfo {
                        qpn: u32_at(1),
                        psn,
                        lid: u16::from_be_bytes([m[9], m[10]]),
                        gid,
                        mtu: m[27],
                        versions: Versions::from_bits(m[28]),
                    }),
                    INFO_LEN,
                ))
            }
            b'P' => {
                let m = b.get(1..PERIOD_LEN).ok_or(ProtoError::Incomplete)?;
                let mut x = [0u8; 8];
                x.copy_from_slice(m);
                Ok((Msg::Period(u64::from_be_bytes(x)), PERIOD_LEN))
            }
            b'E' => {
                let len = b.get(1..3).ok_or(ProtoError::Incomplete)?;
                let len = u16::from_be_bytes([len[0], len[1]]) as usize;
                let text = b.get(3..3 + len).ok_or(ProtoError::Incomplete)?;
                let s = std::str::from_utf8(text).map_err(|_| ProtoError::Utf8)?;
                Ok((Msg::Refuse(s.to_string()), 3 + len))
            }
            t => Err(ProtoError::Tag(t)),
        }
    }

    /// Read one message from a blocking stream (the verbs threads use std sockets).
    pub fn read_from(r: &mut impl std::io::Read) -> std::io::Result<Msg> {
        let mut buf = Vec::with_capacity(INFO_LEN);
        let mut byte = [0u8; 1];
        loop {
            match Msg::decode(&buf) {
                Ok((m, _)) => return Ok(m),
                Err(ProtoError::Incomplete) if buf.len() < 3 + MAX_REASON => {
                    r.read_exact(&mut byte)?;
                    buf.push(byte[0]);
                }
                Err(e) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn info() -> ConnInfo {
        ConnInfo {
            qpn: 0x00_01_02_03,
            psn: 0x00ab_cdef,
            lid: 0,
            gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 250, 202],
            mtu: 5,
            versions: Versions { v1: true, v2: true },
        }
    }

    #[test]
    fn hello_round_trips_and_rejects_strangers() {
        for mode in [Mode::Tcp, Mode::Rdma, Mode::RdmaUd] {
            let h = Hello { mode };
            assert_eq!(Hello::decode(&h.encode()), Ok(h));
        }
        assert_eq!(Hello::decode(b"GET / HTTP/1.1"), Err(ProtoError::BadMagic));
        assert_eq!(Hello::decode(b"RTPING\x03T"), Err(ProtoError::Version(3)));
        assert_eq!(
            Hello { mode: Mode::Tcp }.encode()[6],
            1,
            "any pingd takes TCP pings"
        );
        assert_eq!(Hello { mode: Mode::Rdma }.encode()[6], 2);
        assert_eq!(Hello::decode(b"RTPING\x02T"), Ok(Hello { mode: Mode::Tcp }));
        assert_eq!(
            Hello::decode(b"RTPING\x01R"),
            Err(ProtoError::OldRdma),
            "an RDMA pinger that cannot say its RoCE versions"
        );
        assert_eq!(Hello::decode(b"RTPING\x01X"), Err(ProtoError::Mode(b'X')));
        assert_eq!(Hello::decode(b"RTP"), Err(ProtoError::Incomplete));
    }

    #[test]
    fn probe_round_trips() {
        let p = Probe {
            seq: 7,
            intended_ns: 1_000_000,
            sent_ns: 1_000_250,
        };
        assert_eq!(Probe::decode(&p.encode()), p);
        assert_eq!(&p.encode()[..8], &[0, 0, 0, 0, 0, 0, 0, 7]);
    }

    #[test]
    fn conn_info_round_trips_with_exact_layout() {
        let m = Msg::Info(info());
        let b = m.encode().expect("encodes");
        assert_eq!(b.len(), 29);
        assert_eq!(&b[..5], &[b'I', 0, 1, 2, 3]);
        assert_eq!(&b[5..9], &[0, 0xab, 0xcd, 0xef]);
        assert_eq!(&b[23..27], &[192, 168, 250, 202]);
        assert_eq!(b[28], 3, "RoCE v1 and v2");
        assert_eq!(Msg::decode(&b), Ok((m, 29)));
        // Every strict prefix asks for more bytes instead of guessing.
        for n in 0..b.len() {
            assert_eq!(
                Msg::decode(&b[..n]),
                Err(ProtoError::Incomplete),
                "prefix {n}"
            );
        }
        assert_eq!(
            format!("{:?}", info()),
            "qpn 0x10203 psn 0xabcdef lid 0 gid 0000:0000:0000:0000:0000:ffff:c0a8:faca mtu 5 \
             RoCE v1 and v2"
        );
    }

    #[test]
    fn refusal_round_trips_and_bad_input_is_an_error() {
        let m = Msg::Refuse("RDMA unavailable on this host: no devices".into());
        let b = m.encode().expect("encodes");
        assert_eq!(Msg::decode(&b), Ok((m.clone(), b.len())));
        let mut r = std::io::Cursor::new(b);
        assert_eq!(Msg::read_from(&mut r).expect("reads"), m);
        assert_eq!(Msg::decode(b"Zjunk"), Err(ProtoError::Tag(b'Z')));
        let p = Msg::Period(100_000_000);
        let b = p.encode().expect("encodes");
        assert_eq!(b, b"P\x00\x00\x00\x00\x05\xf5\xe1\x00");
        assert_eq!(Msg::decode(&b), Ok((p, 9)));
        assert_eq!(Msg::decode(&b[..8]), Err(ProtoError::Incomplete));
        assert_eq!(Msg::decode(b"E\x00\x02\xff\xfe"), Err(ProtoError::Utf8));
        let mut bad = info();
        bad.psn = 0x0100_0000;
        assert_eq!(Msg::Info(bad).encode(), Err(ProtoError::Psn(0x0100_0000)));
        let long = Msg::Refuse("é".repeat(MAX_REASON));
        let b = long.encode().expect("encodes");
        assert!(b.len() <= 3 + MAX_REASON);
        assert!(Msg::decode(&b).is_ok(), "cut on a char boundary");
    }

    proptest! {
        #[test]
        fn decoding_never_panics(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Msg::decode(&b);
            let _ = Hello::decode(&b);
        }

        #[test]
        fn any_info_round_trips(qpn in any::<u32>(), psn in 0u32..0x0100_0000, lid in any::<u16>(),
                                gid in any::<[u8; 16]>(), mtu in any::<u8>(), v in 0u8..4) {
            let versions = Versions::from_bits(v);
            let m = Msg::Info(ConnInfo { qpn, psn, lid, gid, mtu, versions });
            let b = m.encode().expect("encodes");
            prop_assert_eq!(Msg::decode(&b), Ok((m, b.len())));
        }
    }
}
