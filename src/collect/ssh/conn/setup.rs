//! Opening a connection: the client configuration (ciphers, algorithms, packet and read-buffer
//! sizes), the TCP or jump-host stream, the handshake and authentication.

use super::super::hostkey::{self, Client, SharedRef};
use super::super::sizes::AnswerSizes;
use super::super::{SshTarget, auth};
use super::{Conn, OpenChannels};
use crate::collect::CollectError;
use russh::client;
use russh::{Preferred, cipher, kex, mac};
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use tokio::sync::Semaphore;

/// The ciphers offered, best first: russh's own list (all AEAD or CTR+MAC, nothing weaker), with
/// aes256-gcm ahead of chacha20-poly1305 where the CPU has AES and carry-less multiply
/// instructions. There GCM costs a fraction of ChaCha20-Poly1305 per byte on both ends (perf of
/// `rocetop export`: ChaCha20 and Poly1305 were a visible part of the client's CPU, decrypting a
/// switch's ~200 KB of `show queuing` a second); without them ChaCha20 stays first, as OpenSSH has it.
fn ciphers() -> Cow<'static, [cipher::Name]> {
    let default = Preferred::default().cipher;
    if !aes_in_hardware() {
        return default;
    }
    let mut c = default.to_vec();
    if let Some(i) = c.iter().position(|n| *n == cipher::AES_256_GCM) {
        let gcm = c.remove(i);
        c.insert(0, gcm);
    }
    Cow::Owned(c)
}

fn aes_in_hardware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The most data one SSH packet to a node may carry (russh: 32 KiB). The session keeps a read
/// buffer as large as the largest packet it has read, for as long as it lives (russh 0.65.1
/// client/mod.rs:1403 one per session, cipher/mod.rs:334 grown to the packet, start_reading
/// only clears it): a node's first stream frame (~30 KB) left 32-64 KiB per connection. Under
/// 8 KiB with room for the packet's header, padding and MAC, the whole packet fits in 8 KiB:
/// glibc's in-use heap fell going from 16 KiB to 8, not measurably further at 4, and export's
/// CPU was lowest at 8 (smaller packets cost more a byte). Switches keep russh's size: with
/// smaller packets their ~200 KB answers every poll came in more TCP segments and took more
/// client CPU a poll. (The channel window stays russh's 2 MiB: russh
/// opens it again as data arrives, not as it is read, so it bounds nothing in memory; the
/// 100-message queue per channel does.)
pub const NODE_MAX_PACKET: u32 = (8 << 10) - 256;

/// Read buffers of a direct connection (held as long as it lives: 512 nodes hold 2 MiB).
const NODE_READ_BUFFER: usize = 4 << 10;
const SWITCH_READ_BUFFER: usize = 32 << 10;

/// The client configuration for `t`: keepalive, nodelay, host-key algorithms limited to those
/// recorded in known_hosts, the legacy algorithms this device is allowed, and the ciphers of
/// [`ciphers`].
fn client_config(t: &SshTarget) -> client::Config {
    let mut preferred = Preferred {
        cipher: ciphers(),
        ..Preferred::default()
    };
    if let Some(algs) = hostkey::preferred_key_algorithms(&t.host, t.port, &t.known_hosts) {
        preferred.key = Cow::Owned(algs);
    }
    if let Some(l) = t.extra_algorithms {
        let mut k = preferred.kex.to_vec();
        if l.dh_group14_sha1 {
            k.push(kex::DH_G14_SHA1);
        }
        if l.ecdh_nistp {
            k.extend([
                kex::ECDH_SHA2_NISTP256,
                kex::ECDH_SHA2_NISTP384,
                kex::ECDH_SHA2_NISTP521,
            ]);
        }
        preferred.kex = Cow::Owned(k);
        if l.hmac_sha1 {
            let mut m = preferred.mac.to_vec();
            m.extend([mac::HMAC_SHA1_ETM, mac::HMAC_SHA1]);
            preferred.mac = Cow::Owned(m);
        }
    }
    client::Config {
        preferred,
        maximum_packet_size: if t.switch_mode {
            client::Config::default().maximum_packet_size
        } else {
            NODE_MAX_PACKET
        },
        nodelay: true,
        keepalive_interval: Some(t.keepalive_interval),
        keepalive_max: t.keepalive_max,
        inactivity_timeout: None,
        ..Default::default()
    }
}

type OpenFuture<'a> = Pin<Box<dyn Future<Output = Result<Conn, CollectError>> + Send + 'a>>;

/// Connect (through the jump host if any), check the host key, authenticate.
pub(crate) fn open(t: &SshTarget) -> OpenFuture<'_> {
    Box::pin(async move {
        let config = Arc::new(client_config(t));
        let handler = Client::new(t);
        let shared = handler.shared.clone();
        let hp = t.host_port();
        let (res, jump) = match &t.proxy_jump {
            None => {
                let tcp = tokio::net::TcpStream::connect((t.host.as_str(), t.port))
                    .await
                    .map_err(|e| tcp_error(&e, &t.host, t.port))?;
                let _ = tcp.set_nodelay(true);
                // russh reads each packet's first block, then the rest, each a read of the socket
                // (strace of export at N=8: ~90 recvfrom a second, 40 packets). A small buffer
                // takes a packet and what follows it in one: a node's frame or a keepalive fits in
                // NODE_READ_BUFFER; a switch's answers come in packets of several KB.
                let cap = if t.switch_mode {
                    SWITCH_READ_BUFFER
                } else {
                    NODE_READ_BUFFER
                };
                let tcp = tokio::io::BufReader::with_capacity(cap, tcp);
                (client::connect_stream(config, tcp, handler).await, None)
            }
            Some(j) => {
                let jc = open(j).await.map_err(|e| via(&e, j))?;
                let ch = jc
                    .handle
                    .channel_open_direct_tcpip(t.host.clone(), u32::from(t.port), "127.0.0.1", 0)
                    .await
                    .map_err(|e| {
                        CollectError::Connect(format!(
                            "jump host {} could not reach {hp}: {e}",
                            j.host_port()
                        ))
                    })?;
                let r = client::connect_stream(config, ch.into_stream(), handler).await;
                (r, Some(Arc::new(jc)))
            }
        };
        let mut handle = res.map_err(|e| handshake_error(&e, &shared, t))?;
        auth::authenticate(&mut handle, t).await?;
        Ok(Conn {
            handle,
            shared,
            slots: Arc::new(Semaphore::new(t.max_channels.max(1))),
            open: Arc::new(OpenChannels::default()),
            served: AtomicUsize::new(0),
            host_port: hp,
            max_answer: t.max_answer_bytes,
            sizes: AnswerSizes::default(),
            _jump: jump,
        })
    })
}

fn via(e: &CollectError, j: &SshTarget) -> CollectError {
    CollectError::Connect(format!("jump host {}: {e}", j.host_port()))
}

fn tcp_error(e: &std::io::Error, host: &str, port: u16) -> CollectError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => CollectError::Refused(format!(" by {host}:{port}")),
        K::TimedOut => CollectError::Connect(format!("{host}:{port}: TCP connect timed out")),
        _ => CollectError::Connect(format!("{host}:{port}: {e}")),
    }
}

fn handshake_error(e: &russh::Error, shared: &SharedRef, t: &SshTarget) -> CollectError {
    if let Some(v) = shared.lock().ok().and_then(|mut s| s.verdict.take()) {
        return v;
    }
    CollectError::Connect(hostkey::describe_error(e, &t.host, t.port))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same ciphers as russh offers, none added or dropped; GCM first where AES is in
    /// hardware, else russh's (and OpenSSH's) order.
    #[test]
    fn ciphers_are_russh_s_with_gcm_first_on_aes_hardware() {
        let default = Preferred::default().cipher;
        let ours = ciphers();
        let mut a = default.to_vec();
        let mut b = ours.to_vec();
        a.sort_by_key(|n| n.as_ref().to_string());
        b.sort_by_key(|n| n.as_ref().to_string());
        assert_eq!(a, b);
        if aes_in_hardware() {
            assert_eq!(ours[0], cipher::AES_256_GCM);
        } else {
            assert_eq!(ours[..], default[..]);
        }
    }
}
