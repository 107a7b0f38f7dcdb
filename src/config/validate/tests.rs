use super::*;

fn problems(text: &str) -> Vec<String> {
    build(text, None).err().unwrap_or_default()
}

#[test]
fn three_mistakes_are_reported_together_with_paths() {
    let text = "demo = true\n[poll]\ninterval = \"one second\"\n[[switch]]\nname = \"s1\"\nhost = \"127.0.0.1\"\nos = \"junos\"\n[[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\ndevicez = [\"x\"]\n";
    let p = problems(text);
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(p[0].starts_with("poll.interval: \"one second\""), "{p:#?}");
    assert!(
        p.iter().any(|s| s.starts_with("switch[0].os: \"junos\"")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|s| s.starts_with("node[0].devicez: unknown key")
                && s.contains("did you mean devices?")),
        "{p:#?}"
    );
}

#[test]
fn unknown_top_level_key_fails() {
    let p = problems("demo = true\nswitches = []\n");
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("did you mean switch?"), "{p:?}");
}

#[test]
fn plaintext_password_is_refused_without_echo() {
    let p = problems(
        "[[switch]]\nname = \"sw\"\nhost = \"h\"\nos = \"nxos\"\npassword = \"hunter2-secret\"\n",
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("switch[0].password: a password must never be written in the config file"),
        "the key path, then why: {p:?}"
    );
    assert!(
        p[0].contains("password_env") && p[0].contains("password_command"),
        "and what to use instead: {p:?}"
    );
    assert!(!p[0].contains("hunter2"));
}

#[test]
fn shell_metacharacters_in_names_are_refused() {
    // (config, the key path the problem names, the value it quotes)
    for (bad, path, value) in [
        (
            "[[node]]\nname = \"n1\"\ndevices = [\"rocep11s0; rm -rf ~\"]\n",
            "node[0].devices[0]",
            "rocep11s0; rm -rf ~",
        ),
        (
            "[[node]]\nname = \"n1\"\nnetdevs = [\"ens1$(id)\"]\n",
            "node[0].netdevs[0]",
            "ens1$(id)",
        ),
        (
            "[[node]]\nname = \"n1\"\nsysfs_root = \"/sys`id`\"\n",
            "node[0].sysfs_root",
            "/sys`id`",
        ),
        ("[[node]]\nname = \"n;1\"\n", "node[0].name", "n;1"),
        (
            "[[node]]\nname = \"n1\"\n[[log]]\nnode = \"n1\"\npath = \"~/x.log | nc\"\n",
            "log[0].path",
            "~/x.log | nc",
        ),
        (
            "[[switch]]\nname = \"s\"\nhost = \"h\"\nos = \"nxos\"\nports = [\"Ethernet1/1 ; reload\"]\n",
            "switch[0].ports[0]",
            "Ethernet1/1 ; reload",
        ),
    ] {
        let p = problems(bad);
        let mine = p.iter().find(|x| x.starts_with(&format!("{path}: ")));
        assert!(
            mine.is_some_and(|m| m.contains(&format!("\"{value}\""))),
            "{bad}: names {path} and quotes the value: {p:?}"
        );
        // Nothing unrelated: a name used as the host too may be refused as both.
        assert!(p.iter().all(|x| x.contains(value)), "{bad}: {p:?}");
    }
}

#[test]
fn type_errors_name_their_section() {
    let p = problems("[[node]]\nname = \"n1\"\nport = \"ssh\"\n");
    assert_eq!(p.len(), 1);
    assert!(p[0].starts_with("node[0]:"), "{p:?}");
}

#[test]
fn node_ranges_expand_with_hosts() {
    let c = build(
        "[[node]]\nname = \"gpu[1-3]\"\nhost = \"127.0.0.[2-4]\"\n",
        None,
    )
    .expect("valid");
    let names: Vec<(&str, &str)> = c
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.host.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("gpu1", "127.0.0.2"),
            ("gpu2", "127.0.0.3"),
            ("gpu3", "127.0.0.4")
        ]
    );
}

#[test]
fn hostfile_nodes() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("hosts"), "a slots=2\nb:4\n").expect("write");
    let c = build(
        "[[node]]\nhostfile = \"hosts\"\nuser = \"u\"\n",
        Some(dir.path()),
    )
    .expect("valid");
    assert_eq!(
        c.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        vec!["a", "b"]
    );
    assert_eq!(c.nodes[1].user.as_deref(), Some("u"));
}

#[test]
fn cross_references_are_checked() {
    let p = problems(
        "[[node]]\nname = \"n1\"\n[[log]]\nnode = \"n2\"\npath = \"/x\"\n[[ping]]\npeer = \"n3\"\naddress = \"127.0.0.1:1\"\n",
    );
    assert_eq!(p.len(), 2, "{p:?}");
}

#[test]
fn loose_identity_file_permissions_are_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let key = dir.path().join("id");
    std::fs::write(&key, "not a key").expect("write");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let text = format!("[ssh]\nidentity_file = \"{}\"\n", key.display());
    let c = build(&text, None).expect("valid");
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("chmod 600"));
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    assert!(build(&text, None).expect("valid").warnings.is_empty());
}

#[test]
fn broken_toml_is_one_clear_message() {
    let p = problems("[poll\ninterval = 1");
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("line 1"), "{p:?}");
}

#[test]
fn a_malformed_nxapi_fingerprint_is_a_config_problem() {
    let p = problems(
        "[[switch]]\nname = \"s\"\nhost = \"h\"\nos = \"nxos\"\ntransport = \"nxapi\"\nnxapi_fingerprint = \"SHA256:nope\"\n",
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("switch[0].nxapi_fingerprint"), "{p:?}");
}

/// `source` binds the RDMA control connection (its rail on a multi-rail node): an address, or a
/// clear problem; `qp_type` is rc or ud.
#[test]
fn ping_source_is_an_address() {
    let base = "[[node]]\nname = \"n2\"\n[[ping]]\npeer = \"n2\"\naddress = \"10.0.0.2\"\n";
    let c = build(&format!("{base}source = \"10.0.0.7\"\n"), None).expect("valid");
    assert_eq!(c.pings[0].source, Some("10.0.0.7".parse().expect("ip")));
    assert_eq!(build(base, None).expect("valid").pings[0].source, None);
    let ud = build(&format!("{base}qp_type = \"ud\"\n"), None).expect("valid");
    assert_eq!(ud.pings[0].qp_type, crate::collect::ping::QpType::Ud);
    assert_eq!(
        problems(&format!("{base}qp_type = \"uc\"\n")),
        vec!["ping[0].qp_type: \"uc\" is neither \"rc\" nor \"ud\"".to_string()]
    );
    let p = problems(&format!("{base}source = \"ens224\"\n"));
    assert_eq!(
        p,
        vec!["ping[0].source: \"ens224\" is not an IP address of this host".to_string()]
    );
}

#[test]
fn ping_rdma_pins_are_read_and_checked() {
    let base = "[[node]]\nname = \"n2\"\n[[ping]]\npeer = \"n2\"\naddress = \"10.0.0.2\"\n";
    let c = build(
        &format!("{base}device = \"rocep19s0\"\nib_port = 2\ngid_index = 3\ntraffic_class = 104\nsl = 3\n"),
        None,
    )
    .expect("valid");
    let g = &c.pings[0];
    assert_eq!(
        (
            g.device.as_deref(),
            g.ib_port,
            g.gid_index,
            g.traffic_class,
            g.sl
        ),
        (Some("rocep19s0"), 2, Some(3), 104, 3)
    );
    let d = build(base, None).expect("valid");
    let g = &d.pings[0];
    assert_eq!(
        (
            g.device.as_deref(),
            g.ib_port,
            g.gid_index,
            g.traffic_class,
            g.sl
        ),
        (None, 1, None, 106, 0),
        "defaults: chosen from the route"
    );
    let p = problems(&format!(
        "{base}gid_index = 3\nsl = 16\ntraffic_class = -1\n"
    ));
    assert_eq!(p.len(), 3, "{p:?}");
    assert!(
        p.iter()
            .any(|s| s.starts_with("ping[0].sl: 16 is outside 0..15")),
        "{p:?}"
    );
    assert!(p.iter().any(|s| s.starts_with("ping[0].device: ")), "{p:?}");
    let p = problems(&format!("{base}device = \"mlx4_0\"\nib_port = 0\n"));
    assert_eq!(
        p,
        vec!["ping[0].ib_port: 0 is outside 1..255".to_string()],
        "verbs ports count from 1"
    );
}

#[test]
fn poll_mode_is_stream_or_exec() {
    let ok = |m: &str| build(&format!("demo = true\n[poll]\nmode = \"{m}\"\n"), None);
    assert_eq!(
        ok("stream").map(|c| c.poll.mode).ok(),
        Some(crate::config::PollMode::Stream)
    );
    assert_eq!(
        ok("exec").map(|c| c.poll.mode).ok(),
        Some(crate::config::PollMode::Exec)
    );
    // Nodes stream by default (the default; half exec's CPU on both sides).
    assert_eq!(
        build("demo = true\n", None).map(|c| c.poll.mode).ok(),
        Some(crate::config::PollMode::Stream)
    );
    let p = problems("demo = true\n[poll]\nmode = \"push\"\n");
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("poll.mode: expected \"stream\" or \"exec\""),
        "{p:?}"
    );
}

#[test]
fn roce_dscp_and_topology_interval_are_checked() {
    let c = Config::from_str(
        "[roce]\ndscp = 24\n[poll]\ntopology_interval = \"2m\"\n",
        "t.toml",
        None,
    )
    .expect("config");
    assert_eq!(c.roce.dscp, 24);
    assert_eq!(c.poll.topology_interval, Duration::from_secs(120));
    let p = problems("[roce]\ndscp = 64\ndsc = 1\n[poll]\ntopology_interval = \"1s\"\n");
    assert_eq!(p.len(), 3, "{p:?}");
    assert!(
        p.iter()
            .any(|x| x.contains("roce.dscp") && x.contains("0 to 63")),
        "{p:?}"
    );
    assert!(p.iter().any(|x| x.contains("did you mean dscp?")), "{p:?}");
    assert!(
        p.iter()
            .any(|x| x.contains("poll.topology_interval") && x.contains("10s minimum")),
        "{p:?}"
    );
}

#[test]
fn focus_hosts_are_host_patterns_with_a_shape_and_their_policy_is_strict_by_default() {
    let p = problems(
        "[ssh]\nfocus_hosts = [\"gpu*\", \"*\", \"*.*\", \"gpu;rm\", \"\", \"-oProxy\"]\nfocus_host_key_policy = \"yes\"\n",
    );
    let has = |path: &str, what: &str| p.iter().any(|s| s.starts_with(path) && s.contains(what));
    assert!(
        has("ssh.focus_hosts[1]: \"*\"", "matches any name"),
        "{p:#?}"
    );
    assert!(
        has("ssh.focus_hosts[2]: \"*.*\"", "matches any name"),
        "{p:#?}"
    );
    assert!(has("ssh.focus_hosts[3]", "is not a host pattern"), "{p:#?}");
    assert!(has("ssh.focus_hosts[4]", "is not a host pattern"), "{p:#?}");
    assert!(has("ssh.focus_hosts[5]", "is not a host pattern"), "{p:#?}");
    assert!(
        has("ssh.focus_host_key_policy", "not one of strict, accept-new"),
        "{p:#?}"
    );
    assert_eq!(p.len(), 6, "gpu* is fine: {p:#?}");
    let c = build(
        "[ssh]\nhost_key_policy = \"accept-new\"\nfocus_hosts = [\"gpu*.dc1\"]\n",
        None,
    )
    .expect("valid");
    assert_eq!(c.ssh.focus_hosts, ["gpu*.dc1"]);
    assert_eq!(c.ssh.focus_host_key_policy, HostKeyPolicy::Strict);
    let c = build("[ssh]\nfocus_host_key_policy = \"accept-new\"\n", None).expect("valid");
    assert_eq!(c.ssh.focus_host_key_policy, HostKeyPolicy::AcceptNew);
    assert!(c.ssh.focus_hosts.is_empty());
}

const TWO_LEAVES: &str = "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1/1-4\"]\n[[switch]]\nname = \"leaf2\"\nhost = \"127.0.0.1\"\nos = \"eos\"\nports = [\"Ethernet1/1/1-4\", \"Ethernet1/1/9\"]\n";

fn node(switch_port: &str) -> String {
    format!(
        "{TWO_LEAVES}[[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\nswitch_port = \"{switch_port}\"\n"
    )
}

/// `switch_port` names the leaf where two share port names; a bare name both list is an error that
/// says how to write it, never a silent first match; a bare name one lists is that one's.
#[test]
fn a_switch_port_names_its_switch_where_leaves_share_port_names() {
    let on = |text: &str| {
        let cfg = build(text, None).expect("config");
        (
            cfg.nodes[0].switch.clone(),
            cfg.nodes[0].switch_port.clone(),
        )
    };
    assert_eq!(
        on(&node("leaf2:Eth1/1/2")),
        (Some("leaf2".into()), Some("Ethernet1/1/2".into()))
    );
    assert_eq!(
        on(&node("Ethernet1/1/9")),
        (Some("leaf2".into()), Some("Ethernet1/1/9".into()))
    );
    let p = problems(&node("Ethernet1/1/2"));
    assert_eq!(
        p,
        [
            "node \"n1\".switch_port: \"Ethernet1/1/2\" is a port of leaf1 and leaf2: name the switch, as switch_port = \"leaf1:Ethernet1/1/2\""
        ]
    );
    let p = problems(&node("leaf1:Ethernet1/1/9"));
    assert_eq!(
        p,
        ["node \"n1\".switch_port: \"Ethernet1/1/9\" is not in leaf1's ports"]
    );
    // A prefix that names no switch is part of the port name.
    let p = problems(&node("spine9:Ethernet1/1/2"));
    assert!(
        p[0].contains("\"spine9:Ethernet1/1/2\" is not in any switch's ports"),
        "{p:?}"
    );
    // One switch: the bare form, as ever.
    let one = "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1/1-4\"]\n[[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\nswitch_port = \"Ethernet1/1/3\"\n";
    assert_eq!(on(one).0.as_deref(), Some("leaf1"));
}

#[test]
fn the_simulations_ports_are_ports_of_the_inventory() {
    let cfg = build(
        &format!("[simulation]\nculprit_port = \"leaf2:Ethernet1/1/9\"\ncongested_ports = [\"Ethernet1/1/9\"]\nrate_scale = 0.1\n{TWO_LEAVES}"),
        None,
    )
    .expect("config");
    let sim = &cfg.simulation;
    assert_eq!(
        sim.culprit_port
            .as_ref()
            .map(|p| (p.switch.as_str(), p.port.as_str())),
        Some(("leaf2", "Ethernet1/1/9"))
    );
    assert_eq!(sim.congested_ports.len(), 1);
    assert_eq!(sim.rate_scale, 0.1);
    let p = problems(&format!(
        "[simulation]\nculprit_port = \"Ethernet1/1/1\"\nrate_scale = 0\n{TWO_LEAVES}"
    ));
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with("simulation.culprit_port: \"Ethernet1/1/1\" is a port of leaf1 and leaf2"),
        "{p:?}"
    );
    assert!(p[1].starts_with("simulation.rate_scale: 0 is not"), "{p:?}");
}

/// `[[link]]` ends are ports of named, configured switches; each mistake is said with its key.
#[test]
fn links_name_two_configured_switches_once_each() {
    let sw = "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/49-50\"]\n[[switch]]\nname = \"spine1\"\nhost = \"127.0.0.1\"\nos = \"eos\"\n";
    let ok = build(
        &format!("{sw}[[link]]\na = \"leaf1:Eth1/49\"\nb = \"spine1:Ethernet1\"\n"),
        None,
    )
    .expect("valid");
    assert_eq!(ok.links.len(), 1);
    assert_eq!(ok.links[0].a.port, "Ethernet1/49");
    assert_eq!(ok.links[0].b.switch, "spine1");
    let cases: [(&str, &str); 5] = [
        (
            "a = \"Ethernet1/49\"\nb = \"spine1:Ethernet1\"",
            "link[0].a: \"Ethernet1/49\" does not name a configured switch",
        ),
        (
            "a = \"leaf1:Ethernet1/7\"\nb = \"spine1:Ethernet1\"",
            "link[0].a: \"Ethernet1/7\" is not in leaf1's ports",
        ),
        ("b = \"spine1:Ethernet1\"", "link[0].a: required"),
        (
            "a = \"leaf1:Ethernet1/49\"\nb = \"leaf1:Ethernet1/50\"",
            "link[0]: both ends are on leaf1",
        ),
        (
            "a = \"leaf1:Ethernet1/49\"\nb = \"spine1:Ethernet1\"\nc = 1",
            "link[0].c: unknown key",
        ),
    ];
    for (link, want) in cases {
        let p = problems(&format!("{sw}[[link]]\n{link}\n"));
        assert!(p.iter().any(|s| s.starts_with(want)), "{link}: {p:#?}");
    }
    let twice = problems(&format!(
        "{sw}[[link]]\na = \"leaf1:Ethernet1/49\"\nb = \"spine1:Ethernet1\"\n[[link]]\na = \"leaf1:Ethernet1/50\"\nb = \"spine1:Ethernet1\"\n"
    ));
    assert!(
        twice
            .iter()
            .any(|s| s.starts_with("link[1]: spine1:Ethernet1 is already an end")),
        "{twice:#?}"
    );
}

#[test]
fn ping_device_all_pings_every_rail_and_refuses_one_rails_pins() {
    let base = "[[node]]\nname = \"n2\"\n[[ping]]\npeer = \"n2\"\naddress = \"10.0.0.2\"\n";
    let c = build(&format!("{base}device = \"all\"\n"), None).expect("valid");
    let g = &c.pings[0];
    assert!(g.every_rail);
    assert_eq!(g.device, None, "\"all\" is no device name");
    let one = build(&format!("{base}device = \"mlx5_0\"\n"), None).expect("valid");
    assert!(!one.pings[0].every_rail);
    for (key, line) in [
        ("gid_index", "gid_index = 3"),
        ("ib_port", "ib_port = 2"),
        ("source", "source = \"10.0.0.1\""),
    ] {
        let p = problems(&format!("{base}device = \"all\"\n{line}\n"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with(&format!("ping[0].{key}: {key} names one rail")),
            "{p:?}"
        );
    }
}
