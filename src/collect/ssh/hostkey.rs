//! Host keys: checked against known_hosts (hashed entries included) by russh, with messages
//! that say what to do; `accept-new` records an unknown key. Also the host-key algorithms to
//! offer: only those recorded for the host, or a host known by its ecdsa key would be offered
//! ed25519 first and look unknown (docs/architecture.md).

use super::{HostKeyPolicy, SshTarget, tilde};
use crate::collect::CollectError;
use russh::client::{self, DisconnectReason};
use russh::keys::{self, Algorithm, HashAlg, PublicKey, PublicKeyOrCertificate};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the handler learned, read by the connector after the handshake.
#[derive(Default)]
pub(crate) struct Shared {
    /// Why the host key was refused.
    pub verdict: Option<CollectError>,
    /// Why the connection ended.
    pub closed: Option<String>,
}

pub(crate) type SharedRef = Arc<Mutex<Shared>>;

/// The russh client handler of one connection.
pub(crate) struct Client {
    host: String,
    port: u16,
    known_hosts: PathBuf,
    policy: HostKeyPolicy,
    pub shared: SharedRef,
}

impl Client {
    pub fn new(t: &SshTarget) -> Self {
        Client {
            host: t.host.clone(),
            port: t.port,
            known_hosts: t.known_hosts.clone(),
            policy: t.policy,
            shared: Arc::new(Mutex::new(Shared::default())),
        }
    }

    fn refuse(&self, e: CollectError) -> Result<bool, russh::Error> {
        if let Ok(mut s) = self.shared.lock() {
            s.verdict = Some(e);
        }
        Ok(false)
    }
}

impl client::Handler for Client {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let PublicKeyOrCertificate::PublicKey { key, .. } = key else {
            return self.refuse(CollectError::HostKey(format!(
                "{} presented a host certificate; rocetop checks plain keys against known_hosts",
                host_port(&self.host, self.port)
            )));
        };
        match check(&self.host, self.port, key, &self.known_hosts, self.policy) {
            Ok(()) => Ok(true),
            Err(e) => self.refuse(e),
        }
    }

    async fn disconnected(
        &mut self,
        reason: DisconnectReason<Self::Error>,
    ) -> Result<(), Self::Error> {
        let why = match &reason {
            DisconnectReason::ReceivedDisconnect(i) if i.message.is_empty() => {
                format!(
                    "{} disconnected ({:?})",
                    host_port(&self.host, self.port),
                    i.reason_code
                )
            }
            DisconnectReason::ReceivedDisconnect(i) => {
                format!(
                    "{} disconnected: {}",
                    host_port(&self.host, self.port),
                    i.message
                )
            }
            DisconnectReason::Error(e) => describe_error(e, &self.host, self.port),
        };
        if let Ok(mut s) = self.shared.lock() {
            s.closed.get_or_insert(why);
        }
        match reason {
            DisconnectReason::ReceivedDisconnect(_) => Ok(()),
            DisconnectReason::Error(e) => Err(e),
        }
    }
}

/// russh errors in words.
pub(crate) fn describe_error(e: &russh::Error, host: &str, port: u16) -> String {
    let hp = host_port(host, port);
    match e {
        russh::Error::KeepaliveTimeout => format!("{hp} stopped answering keepalives"),
        russh::Error::HUP | russh::Error::Disconnect => format!("connection closed by {hp}"),
        russh::Error::IO(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("connection closed by {hp}")
        }
        russh::Error::IO(io) => format!("{hp}: {io}"),
        russh::Error::NoCommonAlgo { kind, theirs, .. } => format!(
            "{hp} has no {kind:?} algorithm in common with rocetop (it offers {}); for older \
             network gear allow legacy algorithms for this device",
            theirs.join(",")
        ),
        other => format!("{hp}: {other}"),
    }
}

fn host_port(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

fn key_desc(key: &PublicKey) -> String {
    format!(
        "{} ({})",
        key.fingerprint(HashAlg::Sha256),
        key.algorithm().as_str()
    )
}

/// Known → Ok; unknown → refused or learned by policy; changed → always refused.
pub(crate) fn check(
    host: &str,
    port: u16,
    key: &PublicKey,
    path: &Path,
    policy: HostKeyPolicy,
) -> Result<(), CollectError> {
    let hp = host_port(host, port);
    let kh = tilde(path);
    match keys::check_known_hosts_path(host, port, key, path) {
        Ok(true) => Ok(()),
        Ok(false) if policy == HostKeyPolicy::AcceptNew => {
            learn(host, port, key, path).map_err(|e| {
                CollectError::HostKey(format!("cannot record the key of {hp} in {kh}: {e}"))
            })
        }
        Ok(false) => {
            let p = if port == 22 {
                String::new()
            } else {
                format!("-p {port} ")
            };
            let skipped = skipped_lines(path);
            Err(CollectError::HostKey(format!(
                "unknown host {hp}, key {}; to trust it: ssh-keyscan {p}{host} >> {kh}{skipped}",
                key_desc(key)
            )))
        }
        Err(keys::Error::KeyChanged { line }) => {
            let line = file_line(path, line);
            let r = if port == 22 {
                host.to_string()
            } else {
                format!("'{hp}'")
            };
            Err(CollectError::HostKey(format!(
                "host key changed for {hp} ({kh} line {line}): it now presents {}. Someone may \
                 be intercepting the connection; if the host was reinstalled, remove the old \
                 key with ssh-keygen -R {r} -f {kh}",
                key_desc(key)
            )))
        }
        Err(e) => Err(CollectError::HostKey(format!("cannot read {kh}: {e}"))),
    }
}

/// russh numbers known_hosts lines skipping `#` comments; people (and OpenSSH) count them.
fn file_line(path: &Path, russh_line: usize) -> usize {
    let Ok(text) = std::fs::read_to_string(path) else {
        return russh_line;
    };
    let mut n = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if !l.starts_with('#') {
            n += 1;
            if n == russh_line {
                return i + 1;
            }
        }
    }
    russh_line
}

/// Append the key; russh's learn function starts an empty file with a blank line, so a new
/// file is written here.
fn learn(host: &str, port: u16, key: &PublicKey, path: &Path) -> Result<(), keys::Error> {
    if std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) > 0 {
        return keys::known_hosts::learn_known_hosts_path(host, port, key, path);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let line = format!("{} {}\n", host_port(host, port), key.to_openssh()?);
    std::fs::write(path, line)?;
    Ok(())
}

/// Lines russh does not understand (patterns, `@cert-authority`, `@revoked`), named so an
/// "unknown host" that the user believes known can be explained.
fn skipped_lines(path: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(path) else {
        return String::new();
    };
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let first = l.split_whitespace().next().unwrap_or("");
            first.starts_with('@') || first.contains(['*', '?', '!'])
        })
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            " (known_hosts lines {} use patterns or markers that rocetop does not read)",
            lines.join(", ")
        )
    }
}

/// The host-key algorithms to offer: those recorded for the host, RSA in all its hashes; the
/// defaults when nothing is recorded.
pub(crate) fn preferred_key_algorithms(
    host: &str,
    port: u16,
    path: &Path,
) -> Option<Vec<Algorithm>> {
    let recorded = keys::known_hosts::known_host_keys_path(host, port, path).ok()?;
    let mut out: Vec<Algorithm> = Vec::new();
    for (_, k) in recorded {
        let algs = match k.algorithm() {
            Algorithm::Rsa { .. } => vec![
                Algorithm::Rsa {
                    hash: Some(HashAlg::Sha512),
                },
                Algorithm::Rsa {
                    hash: Some(HashAlg::Sha256),
                },
                Algorithm::Rsa { hash: None },
            ],
            a => vec![a],
        };
        for a in algs {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIJdD7y3aLq454yWBdwLWbieU1ebz9/cu7/QEXn9OIeZJ";
    const OTHER: &str = "AAAAC3NzaC1lZDI1NTE5AAAAILIG2T/B0l0gaqj3puu510tu9N1OkQ4znY3LYuEm5zCF";

    #[test]
    fn unknown_changed_known_and_learned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = dir.path().join("known_hosts");
        let key = keys::parse_public_key_base64(KEY).expect("key");
        let other = keys::parse_public_key_base64(OTHER).expect("key");
        let e = check("127.0.0.1", 2222, &key, &kh, HostKeyPolicy::Strict).expect_err("unknown");
        let m = e.to_string();
        assert!(
            m.contains("unknown host [127.0.0.1]:2222, key SHA256:"),
            "{m}"
        );
        assert!(
            m.contains("(ssh-ed25519); to trust it: ssh-keyscan -p 2222 127.0.0.1 >> "),
            "{m}"
        );
        check("127.0.0.1", 2222, &key, &kh, HostKeyPolicy::AcceptNew).expect("learned");
        check("127.0.0.1", 2222, &key, &kh, HostKeyPolicy::Strict).expect("known now");
        let e =
            check("127.0.0.1", 2222, &other, &kh, HostKeyPolicy::AcceptNew).expect_err("changed");
        assert!(
            e.to_string()
                .contains("host key changed for [127.0.0.1]:2222"),
            "{e}"
        );
        assert!(e.to_string().contains("line 1"), "{e}");
        assert_eq!(
            preferred_key_algorithms("127.0.0.1", 2222, &kh),
            Some(vec![Algorithm::Ed25519])
        );
        assert_eq!(preferred_key_algorithms("127.0.0.9", 2222, &kh), None);
    }

    #[test]
    fn changed_key_line_counts_comments() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = dir.path().join("known_hosts");
        std::fs::write(
            &kh,
            format!("# a\n\n# b\nh1 ssh-ed25519 {OTHER}\nh2 ssh-ed25519 {OTHER}\n"),
        )
        .expect("write");
        let key = keys::parse_public_key_base64(KEY).expect("key");
        let e = check("h2", 22, &key, &kh, HostKeyPolicy::Strict).expect_err("changed");
        assert!(e.to_string().contains("known_hosts line 5)"), "{e}");
        assert!(e.to_string().contains("ssh-keygen -R h2 -f"), "{e}");
    }

    #[test]
    fn pattern_lines_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = dir.path().join("known_hosts");
        std::fs::write(
            &kh,
            format!("*.lab ssh-ed25519 {OTHER}\n@cert-authority * ssh-ed25519 {OTHER}\n"),
        )
        .expect("write");
        let key = keys::parse_public_key_base64(KEY).expect("key");
        let e = check("192.0.2.1", 22, &key, &kh, HostKeyPolicy::Strict).expect_err("unknown");
        assert!(e.to_string().contains("lines 1, 2 use patterns"), "{e}");
        assert!(e.to_string().contains("ssh-keyscan 192.0.2.1 >> "), "{e}");
    }
}
