//! The fix that goes with a failure, chosen by what failed (the source's kind) and the words of
//! the error: a refused ping port is not an sshd problem, a refused key is not a missing agent.

use crate::collect::source::SourceKind;

/// The fix for a source whose connection or first request failed with `err`.
pub fn for_error(kind: SourceKind, err: &str) -> String {
    let e = err.to_ascii_lowercase();
    if kind == SourceKind::Ping {
        return ping(&e);
    }
    if e.contains("unknown host") {
        "verify the fingerprint, then add the key as the message says (or host_key_policy = \"accept-new\")".into()
    } else if e.contains("host key changed") || e.contains("changed") && e.contains("host key") {
        "the host's key differs from known_hosts: find out why before removing the old line".into()
    } else if e.starts_with("auth failed") {
        auth(err)
    } else if e.contains("refused") {
        "nothing listens there: is sshd running on that host, and is `port` right?".into()
    } else if e.contains("timed out") {
        "the host or network is slow or down: check reachability, or raise ssh.connect_timeout / ssh.command_timeout".into()
    } else if e.contains("no ssh transport") || e.contains("not available") {
        "this source cannot be reached from this build or config".into()
    } else if e.contains("no such file") {
        "the path does not exist on that host: check the [[log]] path".into()
    } else {
        "see the message; `rocetop parse KIND` shows what rocetop reads from an output".into()
    }
}

/// A ping source talks to `rocetop pingd` on the peer, never to sshd.
fn ping(e: &str) -> String {
    if e.contains("refused") {
        "nothing listens at that address: start `rocetop pingd` on the peer (default port 18515), or fix the [[ping]] address".into()
    } else if e.contains("timed out") || e.contains("no answer") {
        "the peer does not answer: is `rocetop pingd` running there, and does a firewall let its port through?".into()
    } else {
        "see the message; `rocetop pingd --listen ADDR` must run on the peer".into()
    }
}

/// Authentication: say what was tried and what the server wants, for the user it was tried as.
fn auth(err: &str) -> String {
    let user = err
        .split_once("user ")
        .and_then(|(_, r)| r.split([' ', ':', ';', '(']).next())
        .unwrap_or("?");
    if err.contains("nothing to try") {
        "no key to offer: load one into ssh-agent (ssh-add KEY) or set identity_file; switches: password_env/password_command".into()
    } else if err.contains("password variable") || err.contains("password command") {
        "the password source gave nothing: set the variable named by password_env, or fix password_command".into()
    } else {
        format!(
            "the server refused every key offered for user `{user}`: is `user` right for this host \
             (does `{user}` exist there?), and is the key's .pub in that user's ~/.ssh/authorized_keys?"
        )
    }
}

/// The fix for a node whose `ethtool -S` failed with `why`.
pub fn for_ethtool(node: &str, netdev: &str, why: &str) -> String {
    let w = why.to_ascii_lowercase();
    if w.contains("not found") || w.contains("exit 127") {
        format!(
            "install ethtool on {node} (apt install ethtool), or put it on the PATH of a non-interactive ssh session"
        )
    } else if w.contains("no such device") || w.contains("cannot get") {
        format!("{node} has no netdev `{netdev}`: fix `netdevs`, or leave it out to discover them")
    } else {
        format!("run `ethtool -S {netdev}` on {node} and see why it fails")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_gets_the_fix_for_its_cause() {
        let node = SourceKind::Node;
        assert!(for_error(node, "connection refused (127.0.0.1:22)").contains("sshd running"));
        let ping = for_error(
            SourceKind::Ping,
            "no answer from 127.0.0.1:9: connection refused",
        );
        assert!(
            ping.contains("rocetop pingd") && !ping.contains("sshd"),
            "{ping}"
        );
        let wrong_user = for_error(
            node,
            "auth failed: user no-such-user (tried: /k/id_ed25519); the server accepts publickey",
        );
        assert!(
            wrong_user.contains("`no-such-user`") && !wrong_user.contains("ssh-agent"),
            "{wrong_user}"
        );
        let no_key = for_error(
            node,
            "auth failed: user versa: nothing to try (no agent, no identity file, no password)",
        );
        assert!(no_key.contains("ssh-agent"), "{no_key}");
        assert!(for_error(node, "timed out after 5 s").contains("command_timeout"));
        assert!(for_error(node, "host key: unknown host [127.0.0.1]:2222").contains("fingerprint"));
        assert!(
            for_ethtool(
                "n1",
                "ens1",
                "command failed (exit 127): sh: 1: ethtool: not found"
            )
            .contains("install ethtool")
        );
    }
}
