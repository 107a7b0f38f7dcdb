//! Authentication: ssh-agent first, then identity files, then a password from an environment
//! variable or a command (keyboard-interactive, then password) for network gear. There is no
//! prompt (the TUI owns the terminal): an encrypted key is reported with the ssh-add to run.

use super::hostkey::Client;
use super::{PasswordSource, SshTarget, home, tilde};
use crate::collect::CollectError;
use russh::client::{AuthResult, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::agent::client::AgentClient;
use russh::keys::{self, PrivateKeyWithHashAlg, PublicKey};
use russh::{MethodKind, MethodSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub(crate) async fn authenticate(
    h: &mut Handle<Client>,
    t: &SshTarget,
) -> Result<(), CollectError> {
    let mut tried: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut accepts: Option<MethodSet> = None;
    let mut agent_keys: Vec<PublicKey> = Vec::new();
    let rsa_hash = h.best_supported_rsa_hash().await.ok().flatten().flatten();

    if let Some(sock) = &t.agent_socket {
        match AgentClient::connect_uds(sock).await {
            Ok(mut agent) => {
                if let Some(b) = h.agent_session_binding() {
                    // Only needed for destination-constrained keys; older agents refuse it.
                    let _ = agent.bind_session(b, false).await;
                }
                match agent.request_identities().await {
                    Ok(ids) => {
                        for id in &ids {
                            let key = id.public_key().into_owned();
                            let hash = if key.algorithm().is_rsa() {
                                rsa_hash
                            } else {
                                None
                            };
                            agent_keys.push(key.clone());
                            match h
                                .authenticate_publickey_with(&t.user, key, hash, &mut agent)
                                .await
                            {
                                Ok(AuthResult::Success) => return Ok(()),
                                Ok(AuthResult::Failure {
                                    remaining_methods, ..
                                }) => {
                                    accepts = Some(remaining_methods);
                                }
                                Err(e) => notes.push(format!("agent: {e}")),
                            }
                        }
                        let n = ids.len();
                        tried.push(format!("agent ({n} key{})", if n == 1 { "" } else { "s" }));
                    }
                    Err(e) => notes.push(format!("agent: {e}")),
                }
            }
            Err(e) => notes.push(format!("agent at {}: {e}", sock.display())),
        }
    }

    let explicit = !t.identity_files.is_empty();
    let files: Vec<PathBuf> = if explicit {
        t.identity_files.clone()
    } else {
        ["id_ed25519", "id_ecdsa", "id_rsa"]
            .iter()
            .map(|f| home().join(".ssh").join(f))
            .collect()
    };
    for f in files {
        let name = tilde(&f);
        if !f.exists() {
            if explicit {
                notes.push(format!("identity file {name} not found"));
            }
            continue;
        }
        let key = match keys::load_secret_key(&f, None) {
            Ok(k) => k,
            Err(keys::Error::KeyIsEncrypted) => {
                if !agent_keys.iter().any(|a| public_matches(a, &f)) {
                    notes.push(format!(
                        "key {name} is encrypted: add it to ssh-agent (ssh-add {name})"
                    ));
                }
                continue;
            }
            Err(e) => {
                notes.push(format!("key {name}: {e}"));
                continue;
            }
        };
        if agent_keys
            .iter()
            .any(|a| a.key_data() == key.public_key().key_data())
        {
            continue; // the agent already offered it
        }
        let hash = if key.algorithm().is_rsa() {
            rsa_hash
        } else {
            None
        };
        tried.push(name);
        match h
            .authenticate_publickey(&t.user, PrivateKeyWithHashAlg::new(Arc::new(key), hash))
            .await
        {
            Ok(AuthResult::Success) => return Ok(()),
            Ok(AuthResult::Failure {
                remaining_methods, ..
            }) => accepts = Some(remaining_methods),
            Err(e) => notes.push(format!("{}: {e}", tried.last().map_or("", |s| s.as_str()))),
        }
    }

    if let Some(src) = &t.password {
        let (label, pw) = match password(src, t.connect_timeout).await {
            Ok(x) => x,
            Err(e) => {
                notes.push(e);
                (String::new(), None)
            }
        };
        if let Some(pw) = pw {
            tried.push(label);
            let offers = |m: MethodKind| accepts.as_ref().is_none_or(|a| a.contains(&m));
            if offers(MethodKind::KeyboardInteractive)
                && keyboard_interactive(h, &t.user, &pw).await
            {
                return Ok(());
            }
            if offers(MethodKind::Password) {
                match h.authenticate_password(&t.user, pw).await {
                    Ok(AuthResult::Success) => return Ok(()),
                    Ok(AuthResult::Failure {
                        remaining_methods, ..
                    }) => {
                        accepts = Some(remaining_methods);
                    }
                    Err(e) => notes.push(format!("password: {e}")),
                }
            }
        }
    }

    let mut msg = format!("user {}", t.user);
    if tried.is_empty() {
        msg.push_str(": nothing to try (no agent, no identity file, no password)");
    } else {
        msg.push_str(&format!(" (tried: {})", tried.join(", ")));
    }
    for n in notes {
        msg.push_str("; ");
        msg.push_str(&n);
    }
    if let Some(a) = accepts.filter(|a| !a.is_empty()) {
        let names: Vec<&str> = a.iter().map(<&str>::from).collect();
        msg.push_str(&format!("; the server accepts {}", names.join(",")));
    }
    Err(CollectError::Auth(msg))
}

/// Whether `f.pub` holds the agent's key `a` (so an encrypted key the agent has is no problem).
fn public_matches(a: &PublicKey, f: &std::path::Path) -> bool {
    let mut p = f.as_os_str().to_owned();
    p.push(".pub");
    keys::load_public_key(PathBuf::from(p)).is_ok_and(|k| k.key_data() == a.key_data())
}

async fn keyboard_interactive(h: &mut Handle<Client>, user: &str, pw: &str) -> bool {
    let mut r = h.authenticate_keyboard_interactive_start(user, None).await;
    // Servers may send several rounds (an empty one first); bounded so a broken one cannot loop.
    for _ in 0..4 {
        match r {
            Ok(KeyboardInteractiveAuthResponse::Success) => return true,
            Ok(KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. }) => {
                let answers = prompts.iter().map(|_| pw.to_string()).collect();
                r = h.authenticate_keyboard_interactive_respond(answers).await;
            }
            _ => return false,
        }
    }
    false
}

/// The password and how to name its source in messages.
async fn password(
    src: &PasswordSource,
    t_connect: Duration,
) -> Result<(String, Option<String>), String> {
    match src {
        PasswordSource::Env(var) => match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok((format!("password from ${var}"), Some(v))),
            _ => Err(format!("password variable ${var} is not set")),
        },
        PasswordSource::Command(cmd) => {
            // Within the connect timeout that wraps authentication, so that its own message (naming
            // the command) is what the user sees, not "timed out connecting".
            let limit = (t_connect * 3 / 5).clamp(Duration::from_secs(1), Duration::from_secs(10));
            crate::collect::nxapi::secret::command_first_line(cmd, limit)
                .await
                .map(|pw| ("password from command".into(), Some(pw)))
        }
    }
}
