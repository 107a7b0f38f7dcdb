//! Shell prompts and echoed commands in pasted captures (`[user@host ~]$ rdma stat show`,
//! `root@node:~# ethtool -S ens192`, or the bare command on its own line): recognised so that
//! parsers skip them instead of counting them as unknown, and can read the command's arguments.

/// The words of the command on a prompt line, without the prompt: `Some([])` for a bare prompt,
/// `None` when the line does not look like a prompt.
pub fn after_prompt(line: &str) -> Option<Vec<&str>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    // The prompt ends at the first word ending in `$`, `#`, `%` or `>`; the words up to it must look
    // like a prompt (`[user@host ~]$`, `user@host:~$`, `$`, `#`), not like data.
    let end = words
        .iter()
        .position(|w| w.ends_with(['$', '#', '%', '>']))?;
    let prompt = words.get(..=end)?;
    let first = prompt.first()?;
    let looks_like_prompt = match prompt {
        [only] => only.len() == 1 || only.contains('@') || only.contains(':'),
        _ => first.starts_with('[') || first.contains('@'),
    };
    if !looks_like_prompt {
        return None;
    }
    Some(
        words
            .get(end + 1..)
            .map(<[&str]>::to_vec)
            .unwrap_or_default(),
    )
}

/// The words of `program`'s command line if `line` runs it, with or without a prompt before it
/// (`sudo` and a path such as `/usr/sbin/ethtool` are accepted).
pub fn command<'a>(line: &'a str, program: &str) -> Option<Vec<&'a str>> {
    let words = after_prompt(line).unwrap_or_else(|| line.split_whitespace().collect());
    let start = usize::from(words.first() == Some(&"sudo"));
    let prog = words.get(start)?;
    let base = prog.rsplit('/').next().unwrap_or(prog);
    (base == program).then(|| {
        words
            .get(start + 1..)
            .map(<[&str]>::to_vec)
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_and_commands() {
        assert_eq!(
            after_prompt("[leonro@server ~]$ rdma stat show -p"),
            Some(vec!["rdma", "stat", "show", "-p"])
        );
        assert_eq!(
            after_prompt("root@node1:~# ethtool -S ens192"),
            Some(vec!["ethtool", "-S", "ens192"])
        );
        assert_eq!(after_prompt("# ll /sys"), Some(vec!["ll", "/sys"]));
        assert_eq!(after_prompt("[leonro@server ~]$"), Some(vec![]));
        assert_eq!(after_prompt("rx_prio3_pause: 12"), None);
        assert_eq!(after_prompt("link mlx5_0/1 np_cnp_sent 0"), None);
        assert_eq!(
            command("$ sudo ethtool -S ens1f0", "ethtool"),
            Some(vec!["-S", "ens1f0"])
        );
        assert_eq!(
            command("rdma statistic show", "rdma"),
            Some(vec!["statistic", "show"])
        );
        assert_eq!(command("/sbin/rdma stat", "rdma"), Some(vec!["stat"]));
        assert_eq!(command("rdma_rx_bytes 12", "rdma"), None);
        assert_eq!(command("", "rdma"), None);
    }
}
