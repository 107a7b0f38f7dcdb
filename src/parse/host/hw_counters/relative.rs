//! Pasted hw_counters dumps whose counter lines do not carry the whole sysfs path: people run the
//! command from inside the directory or through a helper, and the device and port are then named
//! once, before the counters:
//!
//! - `cd /sys/class/infiniband/hfi1_0/ports/1/hw_counters` and then `grep -r . .`,
//!   `for f in *; do echo $f $(cat $f); done` or a `printf "%-20s %s"` loop: `name value` or
//!   `name:value` lines (`./name:value` for grep);
//! - `grep -r . hw_counters` from `ports/1`: `hw_counters/name:value`;
//! - MLNX_OFED's `show_counters mlx5_0`: `Port 1 hw counters:` and then `name: value` lines.
//!
//! The command or heading lines set where the following relative lines come from. A relative line
//! with no device named anywhere still counts, under `device="unknown"` (and a note says so): the
//! counter is real, only its device is not in the capture.

/// The directory a relative counter line is in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Dir {
    /// `hw_counters/` (driver counters).
    Hw,
    /// `counters/` (IB PMA port counters).
    Ib,
}

/// Where relative lines come from, as the capture's commands and headings said.
#[derive(Debug, Default)]
pub(super) struct Context {
    pub dev: Option<String>,
    pub port: Option<String>,
    pub dir: Option<Dir>,
}

/// Commands whose line sets the context (or says nothing) rather than holding a counter.
const COMMANDS: &[&str] = &[
    "cd",
    "for",
    "do",
    "done",
    "echo",
    "printf",
    "head",
    "tail",
    "grep",
    "cat",
    "ls",
    "ll",
    "find",
    "watch",
    "sudo",
    "show_counters",
    "show_rdma_counters",
];

/// Whether `word` is one of the [`COMMANDS`] (a shell line, never a value).
pub(super) fn is_command(word: &str) -> bool {
    COMMANDS.contains(&word)
}

/// A sysfs file name as the kernel names counters (`np_cnp_sent`, `RcvHdrOvr10`).
fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Context {
    /// If `line` is a prompt/command line or a `Port N hw counters:` heading, take what it says of
    /// the device, port and directory and return true: it is framing, never a counter.
    pub fn heading(&mut self, line: &str) -> bool {
        let t = line.trim();
        if let Some(port) = port_heading(t) {
            self.port = Some(port.0.to_string());
            self.dir = Some(port.1);
            return true;
        }
        let words = match crate::parse::host::prompt::after_prompt(t) {
            Some(w) => {
                // The prompt's working directory names the listing: `root@n1:/sys/class/
                // infiniband/mlx5_0/ports/1/hw_counters# grep . *`, `[root@n1 counters]#`.
                if let Some(dir) = crate::parse::host::prompt::working_dir(t) {
                    let last = dir.rsplit('/').next().unwrap_or(dir);
                    if dir.contains("infiniband/") {
                        self.cd(dir);
                    } else if matches!(last, "hw_counters" | "counters") {
                        self.cd(last);
                    }
                }
                w
            }
            None => {
                let w: Vec<&str> = t.split_whitespace().collect();
                if !w.first().is_some_and(|c| COMMANDS.contains(c)) {
                    return false;
                }
                w
            }
        };
        let start = usize::from(words.first() == Some(&"sudo"));
        match words.get(start..).unwrap_or_default() {
            [prog, dev, ..] if matches!(*prog, "show_counters" | "show_rdma_counters") => {
                *self = Context {
                    dev: Some(dev.to_string()),
                    ..Context::default()
                };
            }
            ["cd", dir] => self.cd(dir),
            // `grep -r . /sys/class/infiniband/mlx5_0/ports/1/hw_counters`: the lines it prints may be
            // relative to that path only when it is the one directory argument.
            [_, args @ ..] => {
                let paths: Vec<&&str> = args.iter().filter(|a| a.contains("infiniband/")).collect();
                if let [one] = paths.as_slice() {
                    self.cd(one);
                }
            }
            _ => {}
        }
        true
    }

    /// `cd` into a directory: an absolute sysfs path sets everything; `hw_counters`, `counters`,
    /// `ports/1` move within the current device.
    fn cd(&mut self, dir: &str) {
        let dir = dir.trim_matches(['"', '\'']).trim_end_matches("/*");
        // `..` is dropped: `cd ../hw_counters` from `ports/1/counters` lands in the port's hw_counters.
        let comps: Vec<&str> = dir
            .split('/')
            .filter(|c| !matches!(*c, "" | "." | ".."))
            .collect();
        let rel: &[&str] = match comps.iter().position(|c| *c == "infiniband") {
            Some(i) => {
                *self = Context {
                    dev: comps.get(i + 1).map(|d| d.to_string()),
                    ..Context::default()
                };
                comps.get(i + 2..).unwrap_or_default()
            }
            None => &comps,
        };
        let mut rest = rel;
        if let ["ports", port, tail @ ..] = rest {
            self.port = Some(port.to_string());
            self.dir = None;
            rest = tail;
        }
        match rest {
            ["hw_counters", ..] => self.dir = Some(Dir::Hw),
            ["counters", ..] => self.dir = Some(Dir::Ib),
            _ => {}
        }
    }

    /// A counter line relative to the context: its directory, name and value text.
    /// `name: value`, `name:value`, `name value`, `./name:value`, `hw_counters/name:value`,
    /// `ports/1/counters/name:value`.
    pub fn counter<'a>(&self, line: &'a str) -> Option<Relative<'a>> {
        let t = line.trim();
        let (path, value) = match t.split_once(':') {
            Some((path, value)) => (path.trim_end(), value.trim()),
            None => {
                let mut w = t.split_whitespace();
                let (path, value) = (w.next()?, w.next()?);
                if w.next().is_some() {
                    return None;
                }
                (path, value)
            }
        };
        let comps: Vec<&str> = path
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        let (port, dir, name) = match comps.as_slice() {
            // A bare `name value` is a counter only inside a listing a command or heading opened:
            // elsewhere it is as likely junk.
            [name] if self.dev.is_some() || self.dir.is_some() => {
                (None, self.dir.unwrap_or(Dir::Hw), *name)
            }
            ["hw_counters", name] => (None, Dir::Hw, *name),
            ["counters", name] => (None, Dir::Ib, *name),
            ["ports", port, "hw_counters", name] => (Some(*port), Dir::Hw, *name),
            ["ports", port, "counters", name] => (Some(*port), Dir::Ib, *name),
            _ => return None,
        };
        if !is_name(name) || crate::parse::num::count(value).is_none() {
            return None;
        }
        Some(Relative {
            port,
            dir,
            name,
            value,
        })
    }
}

/// A counter line read against the context.
#[derive(Debug, PartialEq)]
pub(super) struct Relative<'a> {
    /// The port the line itself names (`ports/1/...`), else the context's.
    pub port: Option<&'a str>,
    pub dir: Dir,
    pub name: &'a str,
    pub value: &'a str,
}

/// `Port 1 hw counters:` / `Port 1 counters:` (show_counters' section headings).
fn port_heading(t: &str) -> Option<(&str, Dir)> {
    let rest = t.strip_suffix(':')?;
    let mut w = rest.split_whitespace();
    if !w.next()?.eq_ignore_ascii_case("port") {
        return None;
    }
    let port = w.next().filter(|p| p.bytes().all(|b| b.is_ascii_digit()))?;
    let dir = match (w.next(), w.next(), w.next()) {
        (Some(a), Some(b), None)
            if a.eq_ignore_ascii_case("hw") && b.eq_ignore_ascii_case("counters") =>
        {
            Dir::Hw
        }
        (Some(a), None, None) if a.eq_ignore_ascii_case("counters") => Dir::Ib,
        _ => return None,
    };
    Some((port, dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_and_commands_set_the_context() {
        let mut c = Context::default();
        assert!(c.heading("# show_counters mlx5_bond_0"));
        assert_eq!(c.dev.as_deref(), Some("mlx5_bond_0"));
        assert!(c.heading("Port 1 hw counters:"));
        assert_eq!((c.port.as_deref(), c.dir), (Some("1"), Some(Dir::Hw)));
        assert!(c.heading("cd /sys/class/infiniband/hfi1_0/ports/2/counters"));
        assert_eq!(
            (c.dev.as_deref(), c.port.as_deref(), c.dir),
            (Some("hfi1_0"), Some("2"), Some(Dir::Ib))
        );
        assert!(c.heading("[root@n1 counters]# cd ../hw_counters"));
        assert_eq!((c.port.as_deref(), c.dir), (Some("2"), Some(Dir::Hw)));
        assert!(c.heading(r#"for i in *; do printf "%-20.20s  %s\n" "$i" "$(<$i)"; done"#));
        // Data is no heading.
        assert!(!c.heading("np_cnp_sent: 7"));
        assert!(!c.heading("DmaWait               50646"));
    }

    #[test]
    fn relative_lines() {
        let c = Context {
            dir: Some(Dir::Ib),
            ..Context::default()
        };
        let r = c.counter("port_rcv_data 81408901908");
        assert_eq!(r.map(|r| (r.dir, r.name)), Some((Dir::Ib, "port_rcv_data")));
        let r = c.counter("hw_counters/np_cnp_sent:7");
        assert_eq!(
            r.map(|r| (r.dir, r.name, r.value)),
            Some((Dir::Hw, "np_cnp_sent", "7"))
        );
        let r = c.counter("ports/2/hw_counters/out_of_buffer: 3");
        assert_eq!(r.and_then(|r| r.port), Some("2"));
        // Prose, a value that is no count, a path it does not know: not counters.
        for line in [
            "Port 1 hw counters:",
            "lifespan: ten",
            "a/b/c:1",
            "state: 4: ACTIVE",
        ] {
            assert_eq!(c.counter(line), None, "{line}");
        }
        // Outside any listing a bare `name value` is no counter; a path says where it is.
        let none = Context::default();
        assert_eq!(none.counter("foo 12"), None);
        assert!(none.counter("hw_counters/foo:12").is_some());
    }
}
