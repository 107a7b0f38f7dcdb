//! The `[[log]]` and `[[ping]]` sections: the training logs followed and the ping sources.

use super::*;
use crate::collect::ping::QpType;
use crate::config::ALL_RAILS;

pub(super) fn build_log(p: &mut Problems, path: &str, r: RawLog) -> Option<Log> {
    p.extras(path, &r.extra, LOG);
    let node = required(p, path, "node", r.node);
    let lpath = required(p, path, "path", r.path);
    if !lpath.is_empty() && !is_safe_path(&lpath) {
        p.add(
            &format!("{path}.path"),
            format!("\"{lpath}\" is not a plain path (letters, digits and _-./~+@,=)"),
        );
    }
    if let Some(re) = &r.format_regex {
        if let Err(e) = regex::Regex::new(re) {
            p.add(
                &format!("{path}.format_regex"),
                format!("not a valid regex: {e}"),
            );
        }
    }
    Some(Log {
        node,
        path: lpath,
        format_regex: r.format_regex,
        lines: r.lines.unwrap_or(200).min(100_000),
    })
}

pub(super) fn build_ping(p: &mut Problems, path: &str, r: RawPing) -> Option<Ping> {
    p.extras(path, &r.extra, PING);
    let peer = required(p, path, "peer", r.peer);
    let address = required(p, path, "address", r.address);
    if !address.is_empty()
        && !is_host(
            address
                .rsplit_once(':')
                .map_or(address.as_str(), |(h, port)| {
                    if port.parse::<u16>().is_ok() {
                        h
                    } else {
                        address.as_str()
                    }
                }),
        )
    {
        p.add(
            &format!("{path}.address"),
            format!("\"{address}\" is not host[:port]"),
        );
    }
    let rate = r.rate.unwrap_or(10.0);
    if !(0.1..=10_000.0).contains(&rate) {
        p.add(
            &format!("{path}.rate"),
            format!("{rate} pings/s is outside 0.1..10000"),
        );
    }
    let mut byte = |key: &str, v: Option<i64>, min: i64, max: i64| -> Option<u8> {
        let v = v?;
        if (min..=max).contains(&v) {
            Some(v as u8)
        } else {
            p.add(
                &format!("{path}.{key}"),
                format!("{v} is outside {min}..{max}"),
            );
            None
        }
    };
    // Verbs number ports from 1: port 0 makes `modify_qp` to INIT fail with EINVAL, far from here.
    let ib_port = byte("ib_port", r.ib_port, 1, 255).unwrap_or(1);
    let gid_index = byte("gid_index", r.gid_index, 0, 255);
    let traffic_class = byte("traffic_class", r.traffic_class, 0, 255).unwrap_or(106);
    let sl = byte("sl", r.sl, 0, 15).unwrap_or(0);
    let source = r.source.as_deref().and_then(|s| match s.parse() {
        Ok(ip) => Some(ip),
        Err(_) => {
            p.add(
                &format!("{path}.source"),
                format!("\"{s}\" is not an IP address of this host"),
            );
            None
        }
    });
    let qp_type = match r.qp_type.as_deref() {
        None | Some("rc") => QpType::Rc,
        Some("ud") => QpType::Ud,
        Some(other) => {
            p.add(
                &format!("{path}.qp_type"),
                format!("\"{other}\" is neither \"rc\" nor \"ud\""),
            );
            QpType::Rc
        }
    };
    // `device = "all"`: one session per port of every device, each bound to its own rail's
    // address; a GID index, a port or a source address would name one rail only.
    let every_rail = r.device.as_deref() == Some(ALL_RAILS);
    if every_rail {
        for (key, set) in [
            ("gid_index", r.gid_index.is_some()),
            ("ib_port", r.ib_port.is_some()),
            ("source", r.source.is_some()),
        ] {
            if set {
                p.add(
                    &format!("{path}.{key}"),
                    format!(
                        "{key} names one rail; device = \"{ALL_RAILS}\" pings over every rail, \
                         each from its own address"
                    ),
                );
            }
        }
    }
    let device = r.device.clone().filter(|_| !every_rail);
    if r.device.is_none() && (gid_index.is_some() || r.ib_port.is_some()) {
        p.add(
            &format!("{path}.device"),
            "ib_port and gid_index pin a port of a device: set device too",
        );
    }
    Some(Ping {
        peer,
        address,
        rate,
        device,
        every_rail,
        ib_port,
        gid_index,
        traffic_class,
        sl,
        source,
        qp_type,
    })
}
