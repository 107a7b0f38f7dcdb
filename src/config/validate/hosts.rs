//! The `[ssh]`, `[[switch]]` and `[[node]]` sections: where rocetop connects and how, and the
//! names that reach a remote command line.

use super::*;

fn host_key_policy(p: &mut Problems, path: &str, v: Option<&str>) -> HostKeyPolicy {
    match v {
        None | Some("strict") => HostKeyPolicy::Strict,
        Some("accept-new") => HostKeyPolicy::AcceptNew,
        Some(other) => {
            p.add(
                path,
                format!("\"{other}\" is not one of strict, accept-new"),
            );
            HostKeyPolicy::Strict
        }
    }
}

/// `ssh.focus_hosts`: host patterns (letters, digits, `.`, `-`, `_`, and the wildcards `*` and
/// `?`) with something to match besides wildcards and dots: `*` alone would let every label
/// name a host to log in to.
fn focus_hosts(p: &mut Problems, v: Option<Vec<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (i, pat) in v.unwrap_or_default().into_iter().enumerate() {
        let path = format!("ssh.focus_hosts[{i}]");
        let chars_ok = pat
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '*' | '?'));
        if pat.is_empty() || pat.len() > 255 || pat.starts_with('-') || !chars_ok {
            p.add(
                &path,
                format!(
                    "\"{pat}\" is not a host pattern: letters, digits, '.', '-', '_' and the wildcards                      '*' and '?' (which never match a dot), such as \"gpu*\" or \"gpu*.cluster.local\""
                ),
            );
        } else if !pat.chars().any(|c| c.is_ascii_alphanumeric()) {
            p.add(
                &path,
                format!(
                    "\"{pat}\" matches any name a fleet's labels could give: write the names' shape, \
                     such as \"gpu*\""
                ),
            );
        } else {
            out.push(pat);
        }
    }
    out
}

pub(super) fn build_ssh(p: &mut Problems, r: RawSsh, base: Option<&Path>) -> Ssh {
    let policy = host_key_policy(p, "ssh.host_key_policy", r.host_key_policy.as_deref());
    let focus_policy = host_key_policy(
        p,
        "ssh.focus_host_key_policy",
        r.focus_host_key_policy.as_deref(),
    );
    let focus_hosts = focus_hosts(p, r.focus_hosts);
    Ssh {
        known_hosts: path_of(
            r.known_hosts.as_deref().unwrap_or("~/.ssh/known_hosts"),
            base,
        ),
        host_key_policy: policy,
        connect_timeout: p.duration(
            "ssh.connect_timeout",
            &r.connect_timeout,
            Duration::from_secs(5),
        ),
        command_timeout: p.duration(
            "ssh.command_timeout",
            &r.command_timeout,
            Duration::from_secs(5),
        ),
        identity_file: r.identity_file.as_deref().map(|s| path_of(s, base)),
        ssh_config: path_of(r.ssh_config.as_deref().unwrap_or("~/.ssh/config"), base),
        keepalive: p.duration("ssh.keepalive", &r.keepalive, Duration::from_secs(5)),
        max_concurrent_connects: r.max_concurrent_connects.unwrap_or(32).max(1) as usize,
        focus_hosts,
        focus_host_key_policy: focus_policy,
    }
}

pub(super) fn secret(
    p: &mut Problems,
    path: &str,
    env: Option<String>,
    cmd: Option<String>,
) -> Option<Secret> {
    match (env, cmd) {
        (Some(_), Some(_)) => {
            p.add(path, "give password_env or password_command, not both");
            None
        }
        (Some(e), None) => Some(Secret::Env(e)),
        (None, Some(c)) => Some(Secret::Command(c)),
        (None, None) => None,
    }
}

pub(super) fn required(p: &mut Problems, path: &str, key: &str, v: Option<String>) -> String {
    v.unwrap_or_else(|| {
        p.add(&format!("{path}.{key}"), "missing (required)");
        String::new()
    })
}

pub(super) fn check_host(p: &mut Problems, path: &str, host: &str) {
    if !host.is_empty() && !is_host(host) {
        p.add(
            &format!("{path}.host"),
            format!("\"{host}\" is not a host name or address"),
        );
    }
}

pub(super) fn build_switch(
    p: &mut Problems,
    path: &str,
    r: RawSwitch,
    base: Option<&Path>,
) -> Option<Switch> {
    p.extras(path, &r.extra, SWITCH);
    let name = required(p, path, "name", r.name);
    if !name.is_empty() && !is_safe_name(&name) {
        p.add(
            &format!("{path}.name"),
            format!("\"{name}\" may only use letters, digits and _-./:@"),
        );
    }
    let host = required(p, path, "host", r.host);
    check_host(p, path, &host);
    let os = match r.os.as_deref() {
        None => {
            p.add(&format!("{path}.os"), "missing (one of nxos, sonic, eos)");
            SwitchOs::Nxos
        }
        Some("nxos") => SwitchOs::Nxos,
        Some("sonic") => SwitchOs::Sonic,
        Some("eos") => SwitchOs::Eos,
        Some(o) => {
            p.add(
                &format!("{path}.os"),
                format!("\"{o}\" is not one of nxos, sonic, eos"),
            );
            SwitchOs::Nxos
        }
    };
    let transport = match r.transport.as_deref() {
        None | Some("ssh") => SwitchTransport::Ssh,
        Some("nxapi") => SwitchTransport::Nxapi,
        Some(t) => {
            p.add(
                &format!("{path}.transport"),
                format!("\"{t}\" is not one of ssh, nxapi"),
            );
            SwitchTransport::Ssh
        }
    };
    if let Some(fp) = &r.nxapi_fingerprint {
        if let Err(e) = crate::config::fingerprint::parse_fingerprint(fp) {
            p.add(&format!("{path}.nxapi_fingerprint"), e);
        }
    }
    if transport == SwitchTransport::Nxapi && os != SwitchOs::Nxos {
        p.add(
            &format!("{path}.transport"),
            "nxapi works only with os = \"nxos\"",
        );
    }
    let patterns = r.ports.unwrap_or_default();
    let mut ports = Vec::new();
    for (j, pat) in patterns.iter().enumerate() {
        match expand::expand(pat) {
            Ok(v) => {
                for port in v {
                    if !is_safe_name(&port) {
                        p.add(
                            &format!("{path}.ports[{j}]"),
                            format!("\"{port}\" is not a port name"),
                        );
                    }
                    ports.push(normalize_port(&port));
                }
            }
            Err(e) => p.add(&format!("{path}.ports[{j}]"), e),
        }
    }
    let legacy = r.legacy_algorithms.unwrap_or_default();
    for a in &legacy {
        if !LEGACY.contains(&a.as_str()) {
            p.add(
                &format!("{path}.legacy_algorithms"),
                format!("\"{a}\" is not one of {}", LEGACY.join(", ")),
            );
        }
    }
    if let Some(user) = &r.user {
        if !is_safe_name(user) {
            p.add(
                &format!("{path}.user"),
                format!("\"{user}\" is not a user name"),
            );
        }
    }
    Some(Switch {
        name,
        host,
        port: r.port.unwrap_or(22),
        user: r.user.unwrap_or_else(|| "admin".into()),
        os,
        transport,
        password: secret(p, path, r.password_env, r.password_command),
        identity_file: r.identity_file.as_deref().map(|s| path_of(s, base)),
        port_patterns: patterns,
        ports,
        legacy_algorithms: legacy,
        nxapi_port: r.nxapi_port.unwrap_or(443),
        nxapi_ca_file: r.nxapi_ca_file.as_deref().map(|s| path_of(s, base)),
        nxapi_fingerprint: r.nxapi_fingerprint,
    })
}

pub(super) fn names_list(p: &mut Problems, path: &str, v: Option<Vec<String>>) -> Vec<String> {
    let v = v.unwrap_or_default();
    let out = match expand::expand_all(&v) {
        Ok(x) => x,
        Err(e) => {
            p.add(path, e);
            return Vec::new();
        }
    };
    for (j, n) in out.iter().enumerate() {
        if !is_safe_name(n) || n.contains('/') {
            p.add(
                &format!("{path}[{j}]"),
                format!("\"{n}\" is not a device or interface name (letters, digits, _-.:@ only)"),
            );
        }
    }
    out
}

pub(super) fn build_nodes(
    p: &mut Problems,
    path: &str,
    r: RawNode,
    base: Option<&Path>,
    switches: &[Switch],
) -> Vec<Node> {
    p.extras(path, &r.extra, NODE);
    let names: Vec<String> = match (&r.name, &r.hostfile) {
        (Some(_), Some(_)) => {
            p.add(path, "give name or hostfile, not both");
            return Vec::new();
        }
        (None, Some(f)) => {
            match crate::config::file::read_text(
                &path_of(f, base),
                crate::config::file::MAX_HOSTFILE_BYTES,
            ) {
                Ok(t) => match expand::parse_hostfile(&t) {
                    Ok(v) => v,
                    Err(e) => {
                        p.add(&format!("{path}.hostfile"), format!("\"{f}\": {e}"));
                        return Vec::new();
                    }
                },
                Err(e) => {
                    p.add(
                        &format!("{path}.hostfile"),
                        format!("cannot read \"{f}\": {e}"),
                    );
                    return Vec::new();
                }
            }
        }
        (Some(n), None) => match expand::expand(n) {
            Ok(v) => v,
            Err(e) => {
                p.add(&format!("{path}.name"), e);
                return Vec::new();
            }
        },
        (None, None) => {
            p.add(
                &format!("{path}.name"),
                "missing (required, or give hostfile)",
            );
            return Vec::new();
        }
    };
    let hosts: Vec<String> = match &r.host {
        None => names.clone(),
        Some(h) => match expand::expand(h) {
            Ok(v) if v.len() == names.len() => v,
            Ok(v) if v.len() == 1 => vec![v[0].clone(); names.len()],
            Ok(v) => {
                p.add(
                    &format!("{path}.host"),
                    format!("\"{h}\" gives {} hosts for {} names", v.len(), names.len()),
                );
                return Vec::new();
            }
            Err(e) => {
                p.add(&format!("{path}.host"), e);
                return Vec::new();
            }
        },
    };
    let devices = names_list(p, &format!("{path}.devices"), r.devices);
    let netdevs = names_list(p, &format!("{path}.netdevs"), r.netdevs);
    let sysfs_root = r.sysfs_root.unwrap_or_else(|| "/sys".into());
    if !is_safe_path(&sysfs_root) {
        p.add(
            &format!("{path}.sysfs_root"),
            format!("\"{sysfs_root}\" is not a plain path"),
        );
    }
    if let Some(user) = &r.user {
        if !is_safe_name(user) {
            p.add(
                &format!("{path}.user"),
                format!("\"{user}\" is not a user name"),
            );
        }
    }
    let (switch, switch_port) = match r.switch_port.as_deref() {
        Some(t) => {
            let (sw, port) = super::switch_port::split(t, switches);
            (sw, Some(port))
        }
        None => (None, None),
    };
    names
        .into_iter()
        .zip(hosts)
        .map(|(name, host)| {
            if !is_safe_name(&name) {
                p.add(
                    &format!("{path}.name"),
                    format!("\"{name}\" may only use letters, digits and _-.:@"),
                );
            }
            check_host(p, path, &host);
            Node {
                name,
                host,
                port: r.port.unwrap_or(22),
                user: r.user.clone(),
                devices: devices.clone(),
                netdevs: netdevs.clone(),
                switch_port: switch_port.clone(),
                switch: switch.clone(),
                sysfs_root: sysfs_root.clone(),
                identity_file: r.identity_file.as_deref().map(|s| path_of(s, base)),
                local: r.local.unwrap_or(false),
            }
        })
        .collect()
}
