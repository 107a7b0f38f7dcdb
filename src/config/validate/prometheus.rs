//! `[[prometheus]]`: a fleet read from a Prometheus HTTP API. Credentials come from the
//! environment or a command, never from the file (keys that look like one are refused by `extras`).

use super::super::raw::RawPrometheus;
use super::super::{PromAuth, PromUrl, Prometheus, Secret};
use super::keys::PROMETHEUS;
use super::{Problems, is_host, is_safe_name, path_of, required};
use std::path::Path;
use std::time::Duration;

pub(super) fn build(
    p: &mut Problems,
    path: &str,
    r: RawPrometheus,
    base: Option<&Path>,
) -> Option<Prometheus> {
    p.extras(path, &r.extra, PROMETHEUS);
    let auth = auth(p, path, &r);
    let name = required(p, path, "name", r.name);
    if !name.is_empty() && !is_safe_name(&name) {
        p.add(
            &format!("{path}.name"),
            format!("\"{name}\" has characters outside [A-Za-z0-9._-]"),
        );
    }
    let url_text = required(p, path, "url", r.url);
    let url = match parse_url(&url_text) {
        Ok(u) => Some(u),
        Err(e) if !url_text.is_empty() => {
            p.add(&format!("{path}.url"), e);
            None
        }
        Err(_) => None,
    };
    let matchers = match r.selector.as_deref().map(str::trim) {
        None | Some("") => String::new(),
        Some(s) => match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(inner) if !inner.contains(['{', '}']) => inner.trim().to_string(),
            _ => {
                p.add(
                    &format!("{path}.selector"),
                    format!("\"{s}\" is not a label matcher list like {{cluster=\"a\"}}"),
                );
                String::new()
            }
        },
    };
    let node_label = r.node_label.clone().unwrap_or_else(|| "instance".into());
    if !is_label_name(&node_label) {
        p.add(
            &format!("{path}.node_label"),
            format!("\"{node_label}\" is not a Prometheus label name"),
        );
    }
    let step = p.duration(&format!("{path}.step"), &r.step, Duration::from_secs(15));
    if step < Duration::from_secs(1) {
        p.add(
            &format!("{path}.step"),
            "below the 1s minimum (use the scrape interval)",
        );
    }
    let timeout = p.duration(
        &format!("{path}.timeout"),
        &r.timeout,
        Duration::from_secs(10),
    );
    let ca_file = r.ca_file.map(|f| path_of(&f, base));
    if ca_file.is_some() && url.as_ref().is_some_and(|u| !u.tls) {
        p.add(
            &format!("{path}.ca_file"),
            "given for an http:// url (it only applies to https://)",
        );
    }
    Some(Prometheus {
        name,
        url: url?,
        matchers,
        node_label,
        auth: auth?,
        ca_file,
        step,
        timeout,
        // Set from `poll.max_answer_bytes` once the poll section is read.
        max_answer_bytes: crate::config::DEFAULT_MAX_ANSWER_BYTES,
    })
}

fn auth(p: &mut Problems, path: &str, r: &RawPrometheus) -> Option<PromAuth> {
    let one = |env: &Option<String>, cmd: &Option<String>| match (env, cmd) {
        (Some(e), None) => Ok(Some(Secret::Env(e.clone()))),
        (None, Some(c)) => Ok(Some(Secret::Command(c.clone()))),
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(()),
    };
    let bearer = one(&r.bearer_token_env, &r.bearer_token_command);
    let basic = one(&r.basic_password_env, &r.basic_password_command);
    match (bearer, basic, &r.basic_user) {
        (Err(()), _, _) => p.add(
            path,
            "give bearer_token_env or bearer_token_command, not both",
        ),
        (_, Err(()), _) => p.add(
            path,
            "give basic_password_env or basic_password_command, not both",
        ),
        (Ok(Some(_)), Ok(Some(_)), _) | (Ok(Some(_)), _, Some(_)) => {
            p.add(path, "give a bearer token or basic auth, not both")
        }
        (Ok(Some(t)), Ok(None), None) => return Some(PromAuth::Bearer(t)),
        (Ok(None), Ok(Some(pw)), Some(u)) => {
            return Some(PromAuth::Basic {
                user: u.clone(),
                password: pw,
            });
        }
        (Ok(None), Ok(Some(_)), None) => p.add(
            &format!("{path}.basic_user"),
            "missing (basic auth needs a user)",
        ),
        (Ok(None), Ok(None), Some(_)) => p.add(
            path,
            "basic_user needs basic_password_env or basic_password_command (never a password here)",
        ),
        (Ok(None), Ok(None), None) => return Some(PromAuth::None),
    }
    None
}

fn is_label_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `http[s]://host[:port][/prefix]`; no user info (credentials come from env or a command).
pub fn parse_url(s: &str) -> Result<PromUrl, String> {
    let (tls, rest) = if let Some(r) = s.strip_prefix("http://") {
        (false, r)
    } else if let Some(r) = s.strip_prefix("https://") {
        (true, r)
    } else {
        return Err(format!("\"{s}\" must start with http:// or https://"));
    };
    let (authority, prefix) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    if authority.contains('@') {
        return Err(
            "credentials in the url are refused: use bearer_token_env/basic_password_env".into(),
        );
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && !p.contains(']') => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("\"{p}\" is not a port"))?,
        ),
        _ => (authority, if tls { 443 } else { 80 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if !is_host(host) {
        return Err(format!("\"{host}\" is not a host name or address"));
    }
    let prefix = prefix.trim_end_matches('/');
    if prefix.contains(['?', '#', ' ']) {
        return Err(format!("\"/{prefix}\": a path prefix only, no query"));
    }
    Ok(PromUrl {
        tls,
        host: host.to_string(),
        port,
        prefix: if prefix.is_empty() {
            String::new()
        } else {
            format!("/{prefix}")
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn urls() {
        let u = parse_url("http://127.0.0.1:9090").expect("valid");
        assert_eq!(
            (u.tls, u.host.as_str(), u.port, u.prefix.as_str()),
            (false, "127.0.0.1", 9090, "")
        );
        let u = parse_url("https://prom.example/prometheus/").expect("valid");
        assert_eq!(
            (u.tls, u.port, u.prefix.as_str()),
            (true, 443, "/prometheus")
        );
        assert!(parse_url("ftp://x").is_err());
        assert!(parse_url("http://u:pw@x:9090").is_err());
        assert!(parse_url("http://x:99999").is_err());
    }

    #[test]
    fn a_fleet_section_parses_with_defaults() {
        let cfg = Config::from_str(
            "[[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:9090\"\nselector = '{cluster=\"a\"}'\nbearer_token_env = \"PROM_TOKEN\"\n",
            "t",
            None,
        )
        .expect("valid");
        let p = &cfg.prometheus[0];
        assert_eq!(p.node_label, "instance");
        assert_eq!(p.matchers, "cluster=\"a\"");
        assert_eq!(p.auth, PromAuth::Bearer(Secret::Env("PROM_TOKEN".into())));
        assert_eq!(p.step, Duration::from_secs(15));
    }

    #[test]
    fn secrets_in_the_file_and_bad_values_are_all_reported() {
        let e = Config::from_str(
            "[[prometheus]]\nname = \"f\"\nurl = \"http://x:1\"\nbearer_token = \"abc\"\nselector = \"cluster=a\"\nnode_label = \"1x\"\nbasic_user = \"u\"\n",
            "t",
            None,
        )
        .expect_err("invalid");
        let all = e.problems.join("\n");
        assert!(
            all.contains("prometheus[0].bearer_token: a password must never"),
            "{all}"
        );
        assert!(!all.contains("abc"), "the secret is never printed");
        assert!(all.contains("prometheus[0].selector"), "{all}");
        assert!(all.contains("prometheus[0].node_label"), "{all}");
        assert!(all.contains("basic_user needs"), "{all}");
    }
}
