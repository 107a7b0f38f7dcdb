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
        // `$`, `user@host:~$`, or a prompt that is only the working directory (`/sys/.../counters$`)
        [only] => {
            only.len() == 1
                || only.contains('@')
                || only.contains(':')
                || only.starts_with(['/', '~'])
        }
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

/// The working directory a prompt shows: `user@host:/sys/class/infiniband/mlx5_0/ports/1$` gives
/// `/sys/class/infiniband/mlx5_0/ports/1`, `/sys/.../counters$` the path, `[root@n1 counters]#` the
/// directory's name. None when the line has no prompt, or the prompt shows no directory.
pub fn working_dir(line: &str) -> Option<&str> {
    after_prompt(line)?;
    let t = line.trim_start();
    let end = t.find(|c: char| c.is_whitespace()).unwrap_or(t.len());
    let first = &t[..end];
    let dir = if first.starts_with('[') {
        // `[user@host dir]$`: the directory is the next word
        let rest = t.get(end..)?.trim_start();
        let close = rest.find(']')?;
        &rest[..close]
    } else {
        let d = first.trim_end_matches(['$', '#', '%', '>']);
        d.split_once(':').map_or(d, |(_, dir)| dir)
    };
    (!dir.is_empty() && !dir.contains('@')).then_some(dir)
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
        assert_eq!(
            after_prompt("/sys/class/infiniband/mlx5_1/ports/1/counters$ for f in *; do"),
            Some(vec!["for", "f", "in", "*;", "do"])
        );
    }

    #[test]
    fn working_directories() {
        assert_eq!(
            working_dir("u@h:/sys/class/infiniband/mlx5_0/ports/1/hw_counters$ grep . *"),
            Some("/sys/class/infiniband/mlx5_0/ports/1/hw_counters")
        );
        assert_eq!(
            working_dir("/sys/class/infiniband/mlx5_1/ports/1/counters$ ls"),
            Some("/sys/class/infiniband/mlx5_1/ports/1/counters")
        );
        assert_eq!(working_dir("[root@n1 counters]# ls"), Some("counters"));
        assert_eq!(working_dir("root@node1:~# ls"), Some("~"));
        assert_eq!(working_dir("$ ls"), None);
        assert_eq!(working_dir("np_cnp_sent 7"), None);
    }
}
